// POST /_emulator/compare and GET /_emulator/compare?preset=llama2-7b&...: which TPU for a model —
// step time, throughput, MFU, HBM fit, bottleneck and dollars on every accelerator type (the
// dashboard's Compare page). The body is engine/cost/compare_request.h's request (model shapes,
// a JSON IR program or a built-in workload); GET takes the model's fields flat in the query.
// An emulator extension, not part of Cloud TPU v2.
#include "api/api_common.h"
#include "api/google_error.h"
#include "api/routes.h"
#include "engine/cost/compare_request.h"
#include "service/compare/tpu_comparison.h"

namespace tpuemu::api {

void RegisterCompareRoutes(Router& router) {
  router.Add("POST", "/_emulator/compare", [](const HttpRequest& req, const PathParams&) {
    Result<nlohmann::json> body = ParseBody(req.body);
    if (!body.ok()) return ErrorResponse(body.status());
    Result<nlohmann::ordered_json> report = service::CompareTpus(*body);
    if (!report.ok()) return ErrorResponse(report.status());
    return JsonResponse(200, report->dump());
  });
  router.Add("GET", "/_emulator/compare", [](const HttpRequest& req, const PathParams&) {
    const std::vector<std::pair<std::string, std::string>> query(req.query.begin(),
                                                                 req.query.end());
    Result<nlohmann::json> body = engine::cost::CompareQueryToJson(query);
    if (!body.ok()) return ErrorResponse(body.status());
    Result<nlohmann::ordered_json> report = service::CompareTpus(*body);
    if (!report.ok()) return ErrorResponse(report.status());
    return JsonResponse(200, report->dump());
  });
}

}  // namespace tpuemu::api
