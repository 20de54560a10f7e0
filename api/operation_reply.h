// The one way an Operation goes on the wire: rendered by the service, its response's enums as
// numbers when the client asked for enum-encoding=int, and its type URLs in the package of the
// API version the request came in on.
#pragma once

#include <nlohmann/json.hpp>

#include "api/http_types.h"
#include "api/proto_json.h"
#include "base/status.h"
#include "service/operations/operation.h"

namespace tpuemu::api {

nlohmann::json OperationForWire(const HttpRequest& request, const service::Operation& op,
                                ApiVersion version);
// 200 with OperationForWire, or the error envelope.
HttpResponse ReplyOperation(const HttpRequest& request, const Result<service::Operation>& op,
                            ApiVersion version);

}  // namespace tpuemu::api
