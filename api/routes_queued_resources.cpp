// queuedResources.* under /v2 and /v2alpha1 (service/queued_resources/), v2alpha1's
// performMaintenanceQueuedResource (service/faults/maintenance.h) and reservations.list.
#include <random>

#include "api/api_common.h"
#include "api/chaos_middleware.h"
#include "api/google_error.h"
#include "api/operation_reply.h"
#include "api/queued_resource_codec.h"
#include "api/resource_keys.h"
#include "api/routes.h"
#include "service/common/clock.h"

namespace tpuemu::api {
namespace {

using nlohmann::json;

json ForWire(const HttpRequest& req, ApiVersion version, const service::QueuedResource& qr) {
  json out = service::RenderQueuedResource(qr, version == ApiVersion::kV2Alpha1);
  if (WantsIntEnums(req)) QueuedResourceEnumsToInt(out);
  return out;
}

// A queued resource id when the client gave none ("qr-" and 12 hex digits).
std::string GeneratedId() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  char buf[24];
  std::snprintf(buf, sizeof buf, "qr-%012llx",
                static_cast<unsigned long long>(rng() & 0xffffffffffffull));
  return buf;
}

HttpResponse Create(service::QueuedResourceManager& manager, ApiVersion version,
                    const HttpRequest& req, const PathParams& p) {
  std::string id = req.Query("queuedResourceId").value_or("");
  if (id.empty()) id = GeneratedId();
  Result<json> body = ParseApiBody(req.body);
  if (!body.ok()) return ErrorResponse(body.status());
  Result<service::QueuedResourceSpec> spec = DecodeQueuedResource(*body);
  if (!spec.ok()) return ErrorResponse(spec.status());
  // A chaos operationError on a queued resource create fails its Operation right away.
  if (Status injected = InjectedOperationFault(req); !injected.ok()) {
    service::Operation op =
        service::NewOperation(p.at("project"), p.at("location"), QrKeyOf(p).Name(), "create");
    service::FailOperation(op, injected);
    return ReplyOperation(req, op, version);
  }
  return ReplyOperation(req,
                        manager.Create({p.at("project"), p.at("location"), id}, *spec,
                                       req.Query("requestId").value_or("")),
                        version);
}

HttpResponse List(service::QueuedResourceManager& manager, ApiVersion version,
                  const HttpRequest& req, const PathParams& p) {
  Result<service::PageRequest> page = ParsePage(req);
  if (!page.ok()) return ErrorResponse(page.status());
  Result<service::QueuedResourcePage> result =
      manager.List(p.at("project"), p.at("location"), *page);
  if (!result.ok()) return ErrorResponse(result.status());
  json list = json::array();
  for (const service::QueuedResource& qr : result->queued_resources) {
    list.push_back(ForWire(req, version, qr));
  }
  json out = {{"queuedResources", std::move(list)}};
  if (!result->next_page_token.empty()) out["nextPageToken"] = result->next_page_token;
  return JsonResponse(200, out);
}

void RegisterVersion(Router& router, ApiVersion version, service::QueuedResourceManager& manager,
                     service::MaintenanceManager& maintenance,
                     service::ReservationBook& reservations, WorkerThreads& writers) {
  const std::string base =
      "/" + std::string(ApiVersionName(version)) + "/projects/{project}/locations/{location}";
  const std::string collection = base + "/queuedResources";
  const std::string one = collection + "/{queued_resource}";
  router.Add("GET", collection, [&manager, version](const HttpRequest& req, const PathParams& p) {
    return List(manager, version, req, p);
  });
  router.Add("GET", one, [&manager, version](const HttpRequest& req, const PathParams& p) {
    Result<service::QueuedResource> qr = manager.Get(QrKeyOf(p));
    if (!qr.ok()) return ErrorResponse(qr.status());
    return JsonResponse(200, ForWire(req, version, *qr));
  });
  router.AddAsync(
      "POST", collection,
      writers.Offload(AdmittedWrite(
          manager.nodes(), [&manager, version](const HttpRequest& req, const PathParams& p) {
            return Create(manager, version, req, p);
          })));
  router.AddAsync(
      "DELETE", one,
      writers.Offload(AdmittedWrite(manager.nodes(), [&manager, version](const HttpRequest& req,
                                                                         const PathParams& p) {
        Result<bool> force = QueryBool(req, "force");
        if (!force.ok()) return ErrorResponse(force.status());
        return ReplyOperation(
            req, manager.Delete(QrKeyOf(p), *force, req.Query("requestId").value_or("")), version);
      })));
  router.AddAsync("POST", one + ":reset",
                  writers.Offload([&manager, version](const HttpRequest& req, const PathParams& p) {
                    Result<json> body = ParseApiBody(req.body);
                    if (!body.ok()) return ErrorResponse(body.status());
                    return ReplyOperation(req, manager.Reset(QrKeyOf(p)), version);
                  }));
  if (version != ApiVersion::kV2Alpha1) return;
  router.AddAsync(
      "POST", one + ":performMaintenanceQueuedResource",
      writers.Offload([&maintenance, version](const HttpRequest& req, const PathParams& p) {
        Result<json> body = ParseApiBody(req.body);
        if (!body.ok()) return ErrorResponse(body.status());
        Result<std::vector<std::string>> names = BodyStringList(*body, "nodeNames", "node_names");
        if (!names.ok()) return ErrorResponse(names.status());
        return ReplyOperation(req, maintenance.PerformOnQueuedResource(QrKeyOf(p), *names),
                              version);
      }));
  router.Add("GET", base + "/reservations",
             [&reservations](const HttpRequest& req, const PathParams& p) {
               Result<service::PageRequest> page = ParsePage(req);
               if (!page.ok()) return ErrorResponse(page.status());
               Result<std::vector<service::Reservation>> list =
                   reservations.List(p.at("project"), p.at("location"));
               if (!list.ok()) return ErrorResponse(list.status());
               json out = json::array();
               for (const service::Reservation& r : *list) {
                 out.push_back(service::RenderReservation(r));
               }
               return JsonResponse(200, json{{"reservations", std::move(out)}});
             });
}

}  // namespace

void RegisterQueuedResourceRoutes(Router& router, service::QueuedResourceManager& manager,
                                  service::MaintenanceManager& maintenance,
                                  service::ReservationBook& reservations, WorkerThreads& writers) {
  for (ApiVersion version : {ApiVersion::kV2, ApiVersion::kV2Alpha1}) {
    RegisterVersion(router, version, manager, maintenance, reservations, writers);
  }
}

}  // namespace tpuemu::api
