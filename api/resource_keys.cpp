#include "api/resource_keys.h"

#include "api/api_common.h"

namespace tpuemu::api {

service::NodeKey NodeKeyOf(const PathParams& p) {
  return {p.at("project"), p.at("location"), p.at("node")};
}

service::QrKey QrKeyOf(const PathParams& p) {
  return {p.at("project"), p.at("location"), p.at("queued_resource")};
}

std::string NodePath(const PathParams& p) { return ParentName(p) + "/nodes/" + p.at("node"); }

}  // namespace tpuemu::api
