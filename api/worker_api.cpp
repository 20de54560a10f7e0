#include "api/worker_api.h"

#include <memory>
#include <utility>

#include "api/auth.h"

namespace tpuemu::api {

AsyncHandlerFn WorkerApiHandler(const std::string& project, AsyncHandlerFn inner) {
  // The worker's identity is where it connects from, not a secret it holds: the one token of
  // this policy never leaves tpuemud.
  const std::string token = "worker-of-" + project;
  // A project id is letters, digits and '-' (the API refuses others): no JSON escaping needed,
  // and Parse refuses the document if one slipped through.
  Result<AuthPolicy> parsed =
      AuthPolicy::Parse(R"({"tokens": [{"token": ")" + token + R"(", "projects": [")" + project +
                        R"("], "role": "editor"}]})");
  if (!parsed.ok()) {
    // A project id AuthPolicy refuses (none the API accepts): nothing is served.
    return [why = parsed.status()](const HttpRequest&, Responder respond) {
      respond(AuthErrorResponse(Status::PermissionDenied(why.message())));
    };
  }
  auto policy = std::make_shared<const AuthPolicy>(std::move(parsed).value());
  AsyncHandlerFn guarded = RequireAuth(*policy, std::move(inner));
  return
      [policy, guarded = std::move(guarded), token](const HttpRequest& request, Responder respond) {
        HttpRequest as_worker = request;
        as_worker.headers.erase("authorization");
        as_worker.headers["authorization"] = "Bearer " + token;
        guarded(as_worker, std::move(respond));
      };
}

}  // namespace tpuemu::api
