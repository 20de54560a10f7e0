#include "api/node_codec.h"

#include <string_view>

#include "service/operations/operation.h"

namespace tpuemu::api {
namespace {

using nlohmann::json;

Status TypeError(std::string_view field, std::string_view type, const json& value) {
  return Status::InvalidArgument("Invalid value at 'node." + std::string(field) + "' (" +
                                 std::string(type) + "), " + value.dump());
}

Status ExpectString(const json& obj, const char* key, std::string_view path) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null() || it->is_string()) return Status::Ok();
  return TypeError(path, "TYPE_STRING", *it);
}

Status ExpectBool(const json& obj, const char* key, std::string_view path) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null() || it->is_boolean()) return Status::Ok();
  return TypeError(path, "TYPE_BOOL", *it);
}

Status ExpectStringMap(const json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return Status::Ok();
  if (!it->is_object()) return TypeError(key, "map<string, string>", *it);
  for (const auto& [k, v] : it->items()) {
    if (!v.is_string()) return TypeError(std::string(key) + "[" + k + "]", "TYPE_STRING", v);
  }
  return Status::Ok();
}

Status ExpectStringList(const json& obj, const char* key, std::string_view path) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return Status::Ok();
  if (!it->is_array()) return TypeError(path, "repeated string", *it);
  for (std::size_t i = 0; i < it->size(); ++i) {
    if (!(*it)[i].is_string()) {
      return TypeError(std::string(path) + "[" + std::to_string(i) + "]", "TYPE_STRING", (*it)[i]);
    }
  }
  return Status::Ok();
}

Status ExpectObject(const json& obj, const char* key, std::string_view path) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null() || it->is_object()) return Status::Ok();
  return TypeError(path, "TYPE_MESSAGE", *it);
}

// Enum fields take a name or a number; numbers are mapped with `names` (index = number).
Status NormalizeEnum(json& obj, const char* key, std::string_view path,
                     const std::vector<std::string_view>& names) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null() || it->is_string()) return Status::Ok();
  if (it->is_number_integer()) {
    int64_t n = it->get<int64_t>();
    if (n >= 0 && n < static_cast<int64_t>(names.size()) && !names[n].empty()) {
      *it = std::string(names[n]);
      return Status::Ok();
    }
  }
  return TypeError(path, "TYPE_ENUM", *it);
}

const std::vector<std::string_view> kDiskModes = {"DISK_MODE_UNSPECIFIED", "READ_WRITE",
                                                  "READ_ONLY"};

Status CheckDataDisks(json& fields) {
  auto it = fields.find("dataDisks");
  if (it == fields.end() || it->is_null()) return Status::Ok();
  if (!it->is_array()) return TypeError("dataDisks", "repeated AttachedDisk", *it);
  for (std::size_t i = 0; i < it->size(); ++i) {
    json& disk = (*it)[i];
    std::string path = "dataDisks[" + std::to_string(i) + "]";
    if (!disk.is_object()) return TypeError(path, "TYPE_MESSAGE", disk);
    TPUEMU_RETURN_IF_ERROR(ExpectString(disk, "sourceDisk", path + ".sourceDisk"));
    TPUEMU_RETURN_IF_ERROR(NormalizeEnum(disk, "mode", path + ".mode", kDiskModes));
  }
  return Status::Ok();
}

Status CheckNetworkConfig(const json& fields) {
  auto it = fields.find("networkConfig");
  if (it == fields.end() || it->is_null()) return Status::Ok();
  if (!it->is_object()) return TypeError("networkConfig", "TYPE_MESSAGE", *it);
  TPUEMU_RETURN_IF_ERROR(ExpectString(*it, "network", "networkConfig.network"));
  TPUEMU_RETURN_IF_ERROR(ExpectString(*it, "subnetwork", "networkConfig.subnetwork"));
  TPUEMU_RETURN_IF_ERROR(ExpectBool(*it, "enableExternalIps", "networkConfig.enableExternalIps"));
  TPUEMU_RETURN_IF_ERROR(ExpectBool(*it, "canIpForward", "networkConfig.canIpForward"));
  auto q = it->find("queueCount");
  if (q != it->end() && !q->is_null() && !q->is_number_integer()) {
    return TypeError("networkConfig.queueCount", "TYPE_INT32", *q);
  }
  return Status::Ok();
}

Status CheckSchedulingConfig(const json& fields) {
  auto it = fields.find("schedulingConfig");
  if (it == fields.end() || it->is_null()) return Status::Ok();
  if (!it->is_object()) return TypeError("schedulingConfig", "TYPE_MESSAGE", *it);
  for (const char* key : {"preemptible", "reserved", "spot"}) {
    TPUEMU_RETURN_IF_ERROR(ExpectBool(*it, key, std::string("schedulingConfig.") + key));
  }
  return Status::Ok();
}

Status CheckServiceAccount(const json& fields) {
  auto it = fields.find("serviceAccount");
  if (it == fields.end() || it->is_null()) return Status::Ok();
  if (!it->is_object()) return TypeError("serviceAccount", "TYPE_MESSAGE", *it);
  TPUEMU_RETURN_IF_ERROR(ExpectString(*it, "email", "serviceAccount.email"));
  return ExpectStringList(*it, "scope", "serviceAccount.scope");
}

// Names for enum-encoding=int, index = proto number.
const std::vector<std::string_view> kStates = {
    "STATE_UNSPECIFIED", "CREATING", "READY",   "RESTARTING", "REIMAGING", "DELETING",
    "REPAIRING",         "",         "STOPPED", "STOPPING",   "STARTING",  "PREEMPTED",
    "TERMINATED",        "HIDING",   "HIDDEN",  "UNHIDING",   "UNKNOWN"};
const std::vector<std::string_view> kHealth = {
    "HEALTH_UNSPECIFIED",   "HEALTHY", "", "TIMEOUT", "UNHEALTHY_TENSORFLOW",
    "UNHEALTHY_MAINTENANCE"};
const std::vector<std::string_view> kApiVersions = {"API_VERSION_UNSPECIFIED", "V1_ALPHA1", "V1",
                                                    "V2_ALPHA1", "V2"};
const std::vector<std::string_view> kAcceleratorTypes = {
    "TYPE_UNSPECIFIED", "", "V2", "", "V3", "", "", "V4", "", "V5LITE_POD", "V5P", "V6E"};
const std::vector<std::string_view> kSymptoms = {
    "SYMPTOM_TYPE_UNSPECIFIED", "LOW_MEMORY",        "OUT_OF_MEMORY", "EXECUTE_TIMED_OUT",
    "MESH_BUILD_FAIL",          "HBM_OUT_OF_MEMORY", "PROJECT_ABUSE"};

void ToNumber(json& obj, const char* key, const std::vector<std::string_view>& names) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_string()) return;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (!names[i].empty() && names[i] == it->get_ref<const std::string&>()) {
      *it = static_cast<int>(i);
      return;
    }
  }
}

void ToName(json& obj, const char* key, const std::vector<std::string_view>& names) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_number_integer()) return;
  const int64_t n = it->get<int64_t>();
  if (n >= 0 && n < static_cast<int64_t>(names.size()) && !names[n].empty()) {
    *it = std::string(names[n]);
  }
}

}  // namespace

void NodeEnumsToNames(json& node) {
  if (node.contains("acceleratorConfig") && node["acceleratorConfig"].is_object()) {
    ToName(node["acceleratorConfig"], "type", kAcceleratorTypes);
  }
  if (node.contains("dataDisks") && node["dataDisks"].is_array()) {
    for (json& d : node["dataDisks"]) {
      if (d.is_object()) ToName(d, "mode", kDiskModes);
    }
  }
}

Result<service::NodeSpec> DecodeNode(const json& body) {
  json fields = body;
  TPUEMU_RETURN_IF_ERROR(ExpectString(fields, "acceleratorType", "acceleratorType"));
  TPUEMU_RETURN_IF_ERROR(ExpectString(fields, "runtimeVersion", "runtimeVersion"));
  TPUEMU_RETURN_IF_ERROR(ExpectString(fields, "description", "description"));
  TPUEMU_RETURN_IF_ERROR(ExpectString(fields, "cidrBlock", "cidrBlock"));
  TPUEMU_RETURN_IF_ERROR(ExpectStringMap(fields, "labels"));
  TPUEMU_RETURN_IF_ERROR(ExpectStringMap(fields, "metadata"));
  TPUEMU_RETURN_IF_ERROR(ExpectStringList(fields, "tags", "tags"));
  TPUEMU_RETURN_IF_ERROR(ExpectObject(fields, "shieldedInstanceConfig", "shieldedInstanceConfig"));
  TPUEMU_RETURN_IF_ERROR(CheckNetworkConfig(fields));
  TPUEMU_RETURN_IF_ERROR(CheckSchedulingConfig(fields));
  TPUEMU_RETURN_IF_ERROR(CheckServiceAccount(fields));
  TPUEMU_RETURN_IF_ERROR(CheckDataDisks(fields));

  service::NodeSpec spec;
  if (fields.contains("acceleratorType") && fields["acceleratorType"].is_string()) {
    spec.accelerator_type = fields["acceleratorType"].get<std::string>();
  }
  auto config = fields.find("acceleratorConfig");
  if (config != fields.end() && !config->is_null()) {
    if (!config->is_object()) return TypeError("acceleratorConfig", "TYPE_MESSAGE", *config);
    auto type = config->find("type");
    if (type != config->end() && type->is_number_integer()) {
      spec.config_type = std::to_string(type->get<int64_t>());
    } else if (type != config->end() && type->is_string()) {
      spec.config_type = type->get<std::string>();
    } else if (type != config->end() && !type->is_null()) {
      return TypeError("acceleratorConfig.type", "TYPE_ENUM", *type);
    }
    TPUEMU_RETURN_IF_ERROR(ExpectString(*config, "topology", "acceleratorConfig.topology"));
    if (config->contains("topology") && (*config)["topology"].is_string()) {
      spec.config_topology = (*config)["topology"].get<std::string>();
    }
  }
  if (fields.contains("runtimeVersion") && fields["runtimeVersion"].is_string()) {
    spec.runtime_version = fields["runtimeVersion"].get<std::string>();
  }
  // Only client-settable fields are kept; OUTPUT_ONLY ones (state, name, id, …) are ignored.
  for (const char* key :
       {"description", "labels", "metadata", "tags", "networkConfig", "schedulingConfig",
        "dataDisks", "serviceAccount", "shieldedInstanceConfig", "cidrBlock"}) {
    auto it = fields.find(key);
    if (it != fields.end() && !it->is_null()) spec.fields[key] = *it;
  }
  return spec;
}

void NodeEnumsToInt(json& node) {
  ToNumber(node, "state", kStates);
  ToNumber(node, "health", kHealth);
  ToNumber(node, "apiVersion", kApiVersions);
  if (node.contains("acceleratorConfig"))
    ToNumber(node["acceleratorConfig"], "type", kAcceleratorTypes);
  if (node.contains("dataDisks") && node["dataDisks"].is_array()) {
    for (json& d : node["dataDisks"]) ToNumber(d, "mode", kDiskModes);
  }
  if (node.contains("symptoms") && node["symptoms"].is_array()) {
    for (json& s : node["symptoms"]) ToNumber(s, "symptomType", kSymptoms);
  }
}

void OperationEnumsToInt(json& operation) {
  auto it = operation.find("response");
  if (it != operation.end() && it->value("@type", "") == service::kNodeType) NodeEnumsToInt(*it);
}

std::vector<std::string> SplitMask(const std::string& mask) {
  std::vector<std::string> paths;
  std::size_t start = 0;
  while (start <= mask.size()) {
    std::size_t comma = mask.find(',', start);
    std::string part =
        mask.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    std::size_t b = part.find_first_not_of(' '), e = part.find_last_not_of(' ');
    if (b != std::string::npos) paths.push_back(part.substr(b, e - b + 1));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return paths;
}

}  // namespace tpuemu::api
