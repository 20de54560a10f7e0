// operations.* (AIP-151), bound under every API version the service config binds.
#include "api/api_common.h"
#include "api/google_error.h"
#include "api/operation_reply.h"
#include "api/routes.h"

namespace tpuemu::api {
namespace {

using nlohmann::json;

std::string OperationName(const PathParams& p) {
  return ParentName(p) + "/operations/" + p.at("operation");
}

}  // namespace

void RegisterOperationRoutes(Router& router, service::OperationManager& operations,
                             WorkerThreads& writers) {
  struct Version {
    const char* name;
    ApiVersion rendering;  // v1alpha1 is served with v1's type URLs
  };
  for (Version v :
       {Version{"v2", ApiVersion::kV2}, Version{"v1", ApiVersion::kV1},
        Version{"v1alpha1", ApiVersion::kV1}, Version{"v2alpha1", ApiVersion::kV2Alpha1}}) {
    const ApiVersion version = v.rendering;
    std::string base =
        "/" + std::string(v.name) + "/projects/{project}/locations/{location}/operations";
    router.Add("GET", base, [&operations, version](const HttpRequest& req, const PathParams& p) {
      Result<service::PageRequest> page = ParsePage(req);
      if (!page.ok()) return ErrorResponse(page.status());
      Result<service::OperationPage> result =
          operations.List(p.at("project"), p.at("location"), *page);
      if (!result.ok()) return ErrorResponse(result.status());
      json list = json::array();
      for (const service::Operation& op : result->operations)
        list.push_back(OperationForWire(req, op, version));
      json out = {{"operations", list}};
      if (!result->next_page_token.empty()) out["nextPageToken"] = result->next_page_token;
      return JsonResponse(200, out);
    });
    router.Add("GET", base + "/{operation}",
               [&operations, version](const HttpRequest& req, const PathParams& p) {
                 Result<service::Operation> op = operations.Get(OperationName(p));
                 return ReplyOperation(req, op, version);
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
