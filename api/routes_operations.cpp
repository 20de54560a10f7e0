// operations.* (AIP-151), bound under every API version the service config binds.
#include "api/api_common.h"
#include "api/google_error.h"
#include "api/node_codec.h"
#include "api/routes.h"

namespace tpuemu::api {
namespace {

using nlohmann::json;

std::string OperationName(const PathParams& p) {
  return ParentName(p) + "/operations/" + p.at("operation");
}

json RenderForWire(const HttpRequest& req, const service::Operation& op) {
  json out = service::RenderOperation(op);
  if (WantsIntEnums(req)) OperationEnumsToInt(out);
  return out;
}

}  // namespace

void RegisterOperationRoutes(Router& router, service::OperationManager& operations,
                             WorkerThreads& writers) {
  for (std::string version : {"v2", "v1", "v1alpha1", "v2alpha1"}) {
    std::string base = "/" + version + "/projects/{project}/locations/{location}/operations";
    router.Add("GET", base, [&operations](const HttpRequest& req, const PathParams& p) {
      Result<service::PageRequest> page = ParsePage(req);
      if (!page.ok()) return ErrorResponse(page.status());
      Result<service::OperationPage> result =
          operations.List(p.at("project"), p.at("location"), *page);
      if (!result.ok()) return ErrorResponse(result.status());
      json list = json::array();
      for (const service::Operation& op : result->operations)
        list.push_back(RenderForWire(req, op));
      json out = {{"operations", list}};
      if (!result->next_page_token.empty()) out["nextPageToken"] = result->next_page_token;
      return JsonResponse(200, out);
    });
    router.Add("GET", base + "/{operation}",
               [&operations](const HttpRequest& req, const PathParams& p) {
                 Result<service::Operation> op = operations.Get(OperationName(p));
                 if (!op.ok()) return ErrorResponse(op.status());
                 return JsonResponse(200, RenderForWire(req, *op));
               });
    router.AddAsync("DELETE", base + "/{operation}",
                    writers.Offload([&operations](const HttpRequest&, const PathParams& p) {
                      return ReplyStatus(operations.Delete(OperationName(p)));
                    }));
    router.AddAsync("POST", base + "/{operation}:cancel",
                    writers.Offload([&operations](const HttpRequest&, const PathParams& p) {
                      return ReplyStatus(operations.Cancel(OperationName(p)));
                    }));
  }
}

}  // namespace tpuemu::api
