#include "api/operation_reply.h"

#include "api/api_common.h"
#include "api/google_error.h"
#include "api/node_codec.h"
#include "api/queued_resource_codec.h"
#include "service/queued_resources/queued_resource_manager.h"

namespace tpuemu::api {

nlohmann::json OperationForWire(const HttpRequest& request, const service::Operation& op,
                                ApiVersion version) {
  nlohmann::json out = service::RenderOperation(op);
  if (WantsIntEnums(request)) {
    OperationEnumsToInt(out);
    auto response = out.find("response");
    if (response != out.end() && response->value("@type", "") == service::kQueuedResourceType) {
      QueuedResourceEnumsToInt(*response);
    }
  }
  ForVersion(version, out);
  return out;
}

HttpResponse ReplyOperation(const HttpRequest& request, const Result<service::Operation>& op,
                            ApiVersion version) {
  if (!op.ok()) return ErrorResponse(op.status());
  return JsonResponse(200, OperationForWire(request, *op, version));
}

}  // namespace tpuemu::api
