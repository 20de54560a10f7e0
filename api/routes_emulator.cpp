// Emulator control plane: liveness, readiness, reset (the conventions of LocalStack, moto and the
// gcloud emulators; docs/api-fidelity.md §10) and the replicas serving the store.
#include <algorithm>

#include "api/api_common.h"
#include "api/google_error.h"
#include "api/routes.h"
#include "service/common/clock.h"

namespace tpuemu::api {

void RegisterEmulatorRoutes(Router& router, EmulatorHooks hooks) {
  router.Add("GET", "/healthz", [](const HttpRequest&, const PathParams&) {
    return JsonResponse(200, nlohmann::json{{"status", "ok"}});
  });
  const std::atomic<bool>* ready = hooks.ready;
  router.Add("GET", "/readyz", [ready](const HttpRequest&, const PathParams&) {
    if (ready != nullptr && !ready->load()) {
      return ErrorResponse(
          Status::Unavailable("tpuemud is starting: opening the store and "
                              "resuming unfinished transitions"));
    }
    return JsonResponse(200, nlohmann::json{{"status", "ready"}});
  });
  std::function<Status()> reset = hooks.reset;
  router.Add("POST", "/_emulator/reset", [reset](const HttpRequest&, const PathParams&) {
    if (!reset) return ErrorResponse(Status::Unimplemented("reset is not wired"));
    Status s = reset();
    if (!s.ok()) return ErrorResponse(s);
    return JsonResponse(200, nlohmann::json{{"status", "ok"}});
  });
  const service::ReplicaSet* replicas = hooks.replicas;
  router.Add("GET", "/_emulator/replicas", [replicas](const HttpRequest&, const PathParams&) {
    if (replicas == nullptr) return ErrorResponse(Status::Unimplemented("replicas are not wired"));
    int64_t now_ms = 0;
    Result<std::vector<db::ReplicaRow>> rows = replicas->List(&now_ms);
    if (!rows.ok()) return ErrorResponse(rows.status());
    nlohmann::json out = {{"self", replicas->id()}, {"replicas", nlohmann::json::array()}};
    for (const db::ReplicaRow& row : *rows) {
      out["replicas"].push_back(
          {{"id", row.id},
           {"address", row.address},
           {"startTime",
            service::FormatRfc3339(service::WallTime(std::chrono::milliseconds(row.started_ms)))},
           {"heartbeatAgeMs", std::max<int64_t>(0, now_ms - row.heartbeat_ms)}});
    }
    return JsonResponse(200, out);
  });
}

}  // namespace tpuemu::api
