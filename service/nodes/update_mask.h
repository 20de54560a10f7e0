// The updateMask of nodes.patch (AIP-134): which Node fields a client may change, and copying
// them from the request's Node onto the stored one. Pure values, thread-compatible.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace tpuemu::service {

class NodeUpdateMask {
 public:
  // `paths` as the client sent them, snake_case or camelCase ("networkConfig.enableExternalIps"
  // = "network_config.enable_external_ips"). INVALID_ARGUMENT "Field 'updateMask' is required;
  // supported paths: …" when there is none, "Invalid value for field 'updateMask': path '<path>'
  // cannot be updated. Supported paths: …" for a path the emulator (like the real service) does
  // not update: description, tags, labels, metadata, network_config.enable_external_ips,
  // data_disks.
  static Result<NodeUpdateMask> Parse(const std::vector<std::string>& paths);

  // Copies each masked field from `patch` (a Node in proto3 JSON) into `fields` (Node::fields). A
  // masked field the patch does not carry is cleared (enable_external_ips becomes false).
  void Apply(const nlohmann::json& patch, nlohmann::json& fields) const;

  const std::vector<std::string>& paths() const { return paths_; }  // snake_case, in mask order

 private:
  std::vector<std::string> paths_;
};

}  // namespace tpuemu::service
