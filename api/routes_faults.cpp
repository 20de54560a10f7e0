// Emulator endpoints that cause faults (docs/faults.md), under /_emulator:
//   POST   /_emulator/projects/P/locations/Z/nodes/N:preempt             {reason}
//   POST   /_emulator/projects/P/locations/Z/nodes/N:scheduleMaintenance {startIn, type,
//                                                                          canReschedule}
//   GET    /_emulator/preemption            PUT {ratePerHour}
//   GET    /_emulator/chaosRules            POST {rule}      DELETE /_emulator/chaosRules/ID
//   GET    /_emulator/capacity              GET|PUT {tensorcores}|DELETE /_emulator/capacity/Z
//   GET|POST /_emulator/projects/P/locations/Z/reservations  DELETE …/reservations/R
// None of them is part of the Cloud TPU API; all answer in Google's error envelope.
#include "api/api_common.h"
#include "api/google_error.h"
#include "api/resource_keys.h"
#include "api/routes.h"
#include "service/common/clock.h"
#include "service/nodes/node_state_machine.h"

namespace tpuemu::api {
namespace {

using nlohmann::json;

constexpr char kLocation[] = "/_emulator/projects/{project}/locations/{location}";

Result<std::string> OptionalString(const json& body, const char* key) {
  auto it = body.find(key);
  if (it == body.end() || it->is_null()) return std::string();
  if (!it->is_string()) {
    return Status::InvalidArgument("Invalid value for field '" + std::string(key) +
                                   "': " + it->dump() + " (a string).");
  }
  return it->get<std::string>();
}

Result<int64_t> RequiredInteger(const json& body, const char* key) {
  auto it = body.find(key);
  if (it == body.end() || !it->is_number_integer()) {
    return Status::InvalidArgument("Field '" + std::string(key) + "' is required: an integer.");
  }
  return it->get<int64_t>();
}

void RegisterNodeFaults(Router& router, const FaultRouteDeps& deps) {
  const std::string node = std::string(kLocation) + "/nodes/{node}";
  router.AddAsync("POST", node + ":preempt",
                  deps.writers->Offload(
                      [preempter = deps.preempter](const HttpRequest& req, const PathParams& p) {
                        Result<json> body = ParseBody(req.body);
                        if (!body.ok()) return ErrorResponse(body.status());
                        Result<std::string> reason = OptionalString(*body, "reason");
                        if (!reason.ok()) return ErrorResponse(reason.status());
                        Result<service::Node> node = preempter->Preempt(
                            NodeKeyOf(p), reason->empty() ? "preempted on request" : *reason);
                        if (!node.ok()) return ErrorResponse(node.status());
                        return JsonResponse(200, service::RenderNode(*node));
                      }));
  router.AddAsync(
      "POST", node + ":scheduleMaintenance",
      deps.writers->Offload(
          [maintenance = deps.maintenance](const HttpRequest& req, const PathParams& p) {
            Result<json> body = ParseBody(req.body);
            if (!body.ok()) return ErrorResponse(body.status());
            Result<std::string> start_in = OptionalString(*body, "startIn");
            if (!start_in.ok()) return ErrorResponse(start_in.status());
            Result<int64_t> start_ms = start_in->empty()
                                           ? Result<int64_t>(int64_t{60000})
                                           : service::ParseDurationMs(*start_in, "startIn");
            if (!start_ms.ok()) return ErrorResponse(start_ms.status());
            Result<std::string> type = OptionalString(*body, "type");
            if (!type.ok()) return ErrorResponse(type.status());
            auto can = body->find("canReschedule");
            if (can != body->end() && !can->is_null() && !can->is_boolean()) {
              return ErrorResponse(Status::InvalidArgument(
                  "Invalid value for field 'canReschedule': " + can->dump() + " (true or false)."));
            }
            Result<service::Node> node = maintenance->Schedule(
                NodeKeyOf(p), *start_ms, type->empty() ? "SCHEDULED" : *type,
                can != body->end() && can->is_boolean() ? can->get<bool>() : true);
            if (!node.ok()) return ErrorResponse(node.status());
            return JsonResponse(200, service::RenderNode(*node, {.v2alpha1 = true}));
          }));
}

void RegisterGlobalFaults(Router& router, const FaultRouteDeps& deps) {
  service::Preempter* preempter = deps.preempter;
  router.Add("GET", "/_emulator/preemption", [preempter](const HttpRequest&, const PathParams&) {
    return JsonResponse(200, json{{"ratePerHour", preempter->rate_per_hour()}});
  });
  router.Add("PUT", "/_emulator/preemption",
             [preempter](const HttpRequest& req, const PathParams&) {
               Result<json> body = ParseBody(req.body);
               if (!body.ok()) return ErrorResponse(body.status());
               auto rate = body->find("ratePerHour");
               if (rate == body->end() || !rate->is_number() || rate->get<double>() < 0) {
                 return ErrorResponse(
                     Status::InvalidArgument("Field 'ratePerHour' is required: expected "
                                             "preemptions of one node per hour, 0 or more."));
               }
               preempter->set_rate_per_hour(rate->get<double>());
               return JsonResponse(200, json{{"ratePerHour", preempter->rate_per_hour()}});
             });

  service::ChaosRules* chaos = deps.chaos;
  router.Add("GET", "/_emulator/chaosRules", [chaos](const HttpRequest&, const PathParams&) {
    return JsonResponse(200, chaos->List());
  });
  router.Add("POST", "/_emulator/chaosRules", [chaos](const HttpRequest& req, const PathParams&) {
    Result<json> body = ParseBody(req.body);
    if (!body.ok()) return ErrorResponse(body.status());
    return Reply(chaos->Add(*body));
  });
  router.Add("DELETE", "/_emulator/chaosRules/{rule}",
             [chaos](const HttpRequest&, const PathParams& p) {
               return ReplyStatus(chaos->Delete(p.at("rule")));
             });

  service::ZoneCapacity* capacity = deps.capacity;
  router.Add("GET", "/_emulator/capacity", [capacity](const HttpRequest&, const PathParams&) {
    return JsonResponse(200, capacity->List());
  });
  router.Add("GET", "/_emulator/capacity/{zone}",
             [capacity](const HttpRequest&, const PathParams& p) {
               return Reply(capacity->Get(p.at("zone")));
             });
  router.Add("PUT", "/_emulator/capacity/{zone}",
             [capacity](const HttpRequest& req, const PathParams& p) {
               Result<json> body = ParseBody(req.body);
               if (!body.ok()) return ErrorResponse(body.status());
               Result<int64_t> tensorcores = RequiredInteger(*body, "tensorcores");
               if (!tensorcores.ok()) return ErrorResponse(tensorcores.status());
               return Reply(capacity->Set(p.at("zone"), *tensorcores));
             });
  router.Add("DELETE", "/_emulator/capacity/{zone}",
             [capacity](const HttpRequest&, const PathParams& p) {
               return Reply(capacity->Clear(p.at("zone")));
             });
}

void RegisterReservations(Router& router, const FaultRouteDeps& deps) {
  service::ReservationBook* book = deps.reservations;
  service::QueuedResourceManager* queued = deps.queued_resources;
  const std::string collection = std::string(kLocation) + "/reservations";
  router.Add("GET", collection, [book](const HttpRequest&, const PathParams& p) {
    Result<std::vector<service::Reservation>> list = book->List(p.at("project"), p.at("location"));
    if (!list.ok()) return ErrorResponse(list.status());
    json out = json::array();
    for (const service::Reservation& r : *list) out.push_back(service::RenderReservation(r));
    return JsonResponse(200, json{{"reservations", std::move(out)}});
  });
  router.AddAsync(
      "POST", collection,
      deps.writers->Offload([book, queued](const HttpRequest& req, const PathParams& p) {
        Result<json> body = ParseApiBody(req.body);
        if (!body.ok()) return ErrorResponse(body.status());
        std::string id = req.Query("reservationId").value_or("");
        Result<std::string> from_body = OptionalString(*body, "reservationId");
        if (!from_body.ok()) return ErrorResponse(from_body.status());
        if (id.empty()) id = *from_body;
        Result<int64_t> size = RequiredInteger(*body, "size");
        if (!size.ok()) return ErrorResponse(size.status());
        Result<std::string> units = OptionalString(*body, "capacityUnits");
        if (!units.ok()) return ErrorResponse(units.status());
        Result<std::string> type = OptionalString(*body, "resourceType");
        if (!type.ok()) return ErrorResponse(type.status());
        Result<service::Reservation> created = book->Create(
            p.at("project"), p.at("location"), id, *size, units->empty() ? "CORES" : *units, *type);
        if (!created.ok()) return ErrorResponse(created.status());
        queued->OnCapacityChanged(p.at("location"));  // waiting queued resources may fit now
        return JsonResponse(200, service::RenderReservation(*created));
      }));
  router.AddAsync(
      "DELETE", collection + "/{reservation}",
      deps.writers->Offload([book](const HttpRequest&, const PathParams& p) {
        return ReplyStatus(book->Delete("projects/" + p.at("project") + "/locations/" +
                                        p.at("location") + "/reservations/" + p.at("reservation")));
      }));
}

}  // namespace

void RegisterFaultRoutes(Router& router, const FaultRouteDeps& deps) {
  RegisterNodeFaults(router, deps);
  RegisterGlobalFaults(router, deps);
  RegisterReservations(router, deps);
}

}  // namespace tpuemu::api
