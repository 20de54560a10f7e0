// TPU VM workers (an emulator extension beside the nodes): each worker's address, state, SSH
// command and startup script (service/workers/worker_manager.h).
#include <string>

#include "api/api_common.h"
#include "api/google_error.h"
#include "api/resource_keys.h"
#include "api/routes.h"

namespace tpuemu::api {
namespace {

using nlohmann::json;

}  // namespace

void RegisterWorkerRoutes(Router& router, service::NodeManager& nodes,
                          service::WorkerManager& workers) {
  for (const char* version : {"v2", "v2alpha1"}) {
    const std::string node =
        std::string("/") + version + "/projects/{project}/locations/{location}/nodes/{node}";
    router.Add("GET", node + "/workers",
               [&nodes, &workers](const HttpRequest&, const PathParams& p) {
                 Result<service::Node> n = nodes.Get(NodeKeyOf(p));
                 if (!n.ok()) return ErrorResponse(n.status());
                 return JsonResponse(200, workers.Describe(*n));
               });
    router.Add("GET", node + "/workers/{worker}/startupScriptOutput",
               [&nodes, &workers](const HttpRequest& req, const PathParams& p) {
                 Result<service::Node> n = nodes.Get(NodeKeyOf(p));
                 if (!n.ok()) return ErrorResponse(n.status());
                 const std::string& id = p.at("worker");
                 int worker = -1;
                 if (!id.empty() && id.size() < 6 &&
                     id.find_first_not_of("0123456789") == std::string::npos) {
                   worker = std::stoi(id);
                 }
                 int64_t offset = 0;
                 if (auto o = req.Query("offset")) {
                   if (o->empty() || o->size() > 15 ||
                       o->find_first_not_of("0123456789") != std::string::npos) {
                     return ErrorResponse(
                         Status::InvalidArgument("Invalid value for field 'offset': '" + *o +
                                                 "'. Must be a non-negative integer"));
                   }
                   offset = std::stoll(*o);
                 }
                 Result<std::string> out = workers.StartupScriptOutput(*n, worker, offset);
                 if (!out.ok()) return ErrorResponse(out.status());
                 HttpResponse r;
                 r.content_type = "text/plain; charset=utf-8";
                 r.body = std::move(out).value();
                 return r;
               });
  }
}

}  // namespace tpuemu::api
