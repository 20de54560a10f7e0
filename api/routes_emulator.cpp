// Emulator control plane: liveness, readiness and reset (the conventions of LocalStack, moto and
// the gcloud emulators; docs/api-fidelity.md §10).
#include "api/api_common.h"
#include "api/google_error.h"
#include "api/routes.h"

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
}

}  // namespace tpuemu::api
