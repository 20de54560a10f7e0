#include "service/nodes/update_mask.h"

#include <algorithm>
#include <iterator>

namespace tpuemu::service {
namespace {

constexpr const char* kSupported[] = {
    "description", "tags", "labels", "metadata", "network_config.enable_external_ips",
    "data_disks"};

// "networkConfig.enableExternalIps" -> "network_config.enable_external_ips".
std::string SnakeCase(const std::string& path) {
  std::string out;
  for (char c : path) {
    if (c >= 'A' && c <= 'Z') {
      out += '_';
      out += static_cast<char>(c - 'A' + 'a');
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

Result<NodeUpdateMask> NodeUpdateMask::Parse(const std::vector<std::string>& paths) {
  if (paths.empty()) {
    return Status::InvalidArgument(
        "Field 'updateMask' is required; supported paths: description, "
        "tags, labels, metadata, network_config.enable_external_ips, "
        "data_disks.");
  }
  NodeUpdateMask mask;
  for (const std::string& raw : paths) {
    std::string path = SnakeCase(raw);
    if (std::find(std::begin(kSupported), std::end(kSupported), path) == std::end(kSupported)) {
      return Status::InvalidArgument("Invalid value for field 'updateMask': path '" + raw +
                                     "' cannot be updated. Supported paths: description, tags, "
                                     "labels, metadata, network_config.enable_external_ips, "
                                     "data_disks.");
    }
    mask.paths_.push_back(std::move(path));
  }
  return mask;
}

void NodeUpdateMask::Apply(const nlohmann::json& patch, nlohmann::json& fields) const {
  for (const std::string& path : paths_) {
    if (path == "network_config.enable_external_ips") {
      bool on = patch.contains("networkConfig") &&
                patch["networkConfig"].value("enableExternalIps", false);
      fields["networkConfig"]["enableExternalIps"] = on;
      continue;
    }
    const char* key = path == "data_disks" ? "dataDisks" : path.c_str();
    if (patch.contains(key)) {
      fields[key] = patch[key];
    } else {
      fields.erase(key);
    }
  }
}

}  // namespace tpuemu::service
