// The keys and names of resources addressed by a request path's parameters, shared by the route
// files ({project}, {location}, {node}, {queued_resource} as the routes name them).
#pragma once

#include <string>

#include "api/http_types.h"
#include "service/nodes/node.h"
#include "service/queued_resources/queued_resource.h"

namespace tpuemu::api {

service::NodeKey NodeKeyOf(const PathParams& p);
service::QrKey QrKeyOf(const PathParams& p);
// "projects/{project}/locations/{location}/nodes/{node}".
std::string NodePath(const PathParams& p);

}  // namespace tpuemu::api
