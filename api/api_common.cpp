#include "api/api_common.h"

#include <algorithm>
#include <charconv>

#include "api/google_error.h"
#include "api/proto_json.h"

namespace tpuemu::api {

Result<nlohmann::json> ParseBody(const std::string& body, const JsonLimits& limits) {
  using nlohmann::json;
  if (body.find_first_not_of(" \t\r\n") == std::string::npos) return json::object();
  if (body.size() > limits.max_bytes) {
    return Status::InvalidArgument("Invalid JSON payload received. The body has " +
                                   std::to_string(body.size()) + " bytes, above the limit of " +
                                   std::to_string(limits.max_bytes) + ".");
  }
  // One pass outside strings: nesting depth, and values (each ',' separates two; each container
  // holds one more), so neither a deep nor a huge document reaches the parser.
  int depth = 0, max_depth = 0;
  std::size_t values = 1;
  bool in_string = false, escaped = false;
  for (char c : body) {
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      max_depth = std::max(max_depth, ++depth);
      ++values;
    } else if (c == '}' || c == ']') {
      --depth;
    } else if (c == ',') {
      ++values;
    }
  }
  if (max_depth > limits.max_depth) {
    return Status::InvalidArgument("Invalid JSON payload received. Nesting depth " +
                                   std::to_string(max_depth) + " exceeds the limit of " +
                                   std::to_string(limits.max_depth) + ".");
  }
  if (values > limits.max_values) {
    return Status::InvalidArgument("Invalid JSON payload received. The body holds about " +
                                   std::to_string(values) + " values, above the limit of " +
                                   std::to_string(limits.max_values) + ".");
  }
  json parsed = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) {
    return Status::InvalidArgument(
        "Invalid JSON payload received. Unexpected token or truncated body.");
  }
  if (!parsed.is_object()) {
    return Status::InvalidArgument(
        "Invalid JSON payload received. Expected an object at the top level.");
  }
  return parsed;
}

Result<nlohmann::json> ParseApiBody(const std::string& body) {
  Result<nlohmann::json> parsed = ParseBody(body);
  if (parsed.ok()) NormalizeFieldNames(*parsed);
  return parsed;
}

Result<std::vector<std::string>> BodyStringList(const nlohmann::json& body, const char* key,
                                                const char* proto_name) {
  std::vector<std::string> out;
  auto it = body.find(key);
  if (it == body.end() || it->is_null()) return out;
  if (!it->is_array()) {
    return Status::InvalidArgument("Invalid value at '" + std::string(proto_name) +
                                   "' (repeated string), " + it->dump());
  }
  for (const nlohmann::json& v : *it) {
    if (!v.is_string()) {
      return Status::InvalidArgument("Invalid value at '" + std::string(proto_name) +
                                     "' (TYPE_STRING), " + v.dump());
    }
    out.push_back(v.get<std::string>());
  }
  return out;
}

Result<bool> QueryBool(const HttpRequest& req, std::string_view key, bool fallback) {
  std::optional<std::string> value = req.Query(key);
  if (!value || value->empty()) return fallback;
  std::string lower = *value;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower == "true" || lower == "1") return true;
  if (lower == "false" || lower == "0") return false;
  return Status::InvalidArgument("Invalid value for query parameter '" + std::string(key) + "': '" +
                                 *value + "' (true or false).");
}

bool WantsIntEnums(const HttpRequest& req) {
  for (const char* key : {"$alt", "alt"}) {
    auto range = req.query.equal_range(key);
    for (auto it = range.first; it != range.second; ++it) {
      if (it->second.find("enum-encoding=int") != std::string::npos) return true;
    }
  }
  return false;
}

Result<service::PageRequest> ParsePage(const HttpRequest& req) {
  service::PageRequest page;
  if (std::optional<std::string> size = req.Query("pageSize"); size && !size->empty()) {
    int value = 0;
    auto [end, ec] = std::from_chars(size->data(), size->data() + size->size(), value);
    if (ec != std::errc() || end != size->data() + size->size()) {
      return Status::InvalidArgument("Invalid value at 'page_size' (TYPE_INT32), \"" + *size +
                                     "\"");
    }
    if (value < 0) {
      return Status::InvalidArgument(
          "Invalid value for field 'pageSize': must not be negative, got " + *size);
    }
    page.page_size = value;
  }
  if (std::optional<std::string> token = req.Query("pageToken")) page.page_token = *token;
  return page;
}

HttpResponse Reply(const Result<nlohmann::json>& result) {
  if (!result.ok()) return ErrorResponse(result.status());
  return JsonResponse(200, *result);
}

HttpResponse ReplyStatus(const Status& status) {
  if (!status.ok()) return ErrorResponse(status);
  return JsonResponse(200, nlohmann::json::object());
}

std::string ParentName(const PathParams& params) {
  return "projects/" + params.at("project") + "/locations/" + params.at("location");
}

}  // namespace tpuemu::api
