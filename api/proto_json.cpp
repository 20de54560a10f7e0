#include "api/proto_json.h"

namespace tpuemu::api {
namespace {

using nlohmann::json;

// Map fields: their keys are the client's data, never field names.
bool IsMapField(std::string_view key) { return key == "labels" || key == "metadata"; }

void RewriteTypes(json& value, const std::string& package) {
  if (value.is_object()) {
    for (auto& [key, member] : value.items()) {
      if (key == "@type" && member.is_string()) {
        std::string type = member.get<std::string>();
        const std::string from = "google.cloud.tpu.v2.";
        if (std::size_t at = type.find(from); at != std::string::npos) {
          type.replace(at, from.size(), package);
          member = type;
        }
      } else if (key == "multisliceParams" && package == "google.cloud.tpu.v2alpha1.") {
        // renamed below (cannot rename while iterating)
      } else {
        RewriteTypes(member, package);
      }
    }
    if (package == "google.cloud.tpu.v2alpha1." && value.contains("multisliceParams")) {
      value["multiNodeParams"] = std::move(value["multisliceParams"]);
      value.erase("multisliceParams");
    }
  } else if (value.is_array()) {
    for (json& item : value) RewriteTypes(item, package);
  }
}

}  // namespace

std::string_view ApiVersionName(ApiVersion version) {
  switch (version) {
    case ApiVersion::kV1:
      return "v1";
    case ApiVersion::kV2Alpha1:
      return "v2alpha1";
    case ApiVersion::kV2:
      break;
  }
  return "v2";
}

std::string SnakeToCamel(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  bool upper = false;
  for (char c : name) {
    if (c == '_' && !out.empty()) {
      upper = true;
      continue;
    }
    out += upper && c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c;
    upper = false;
  }
  return out;
}

void NormalizeFieldNames(json& value) {
  if (value.is_array()) {
    for (json& item : value) NormalizeFieldNames(item);
    return;
  }
  if (!value.is_object()) return;
  json out = json::object();
  for (auto& [key, member] : value.items()) {
    const std::string camel = SnakeToCamel(key);
    if (!IsMapField(camel)) NormalizeFieldNames(member);
    // lowerCamelCase wins when a body holds both spellings.
    if (camel != key && value.contains(camel)) continue;
    out[camel] = std::move(member);
  }
  value = std::move(out);
}

void ForVersion(ApiVersion version, json& body) {
  if (version == ApiVersion::kV2) return;
  const std::string name(ApiVersionName(version));
  RewriteTypes(body, "google.cloud.tpu." + name + ".");
  auto metadata = body.find("metadata");
  if (metadata != body.end() && metadata->is_object() && metadata->contains("apiVersion")) {
    (*metadata)["apiVersion"] = name;
  }
}

}  // namespace tpuemu::api
