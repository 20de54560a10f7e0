#include "api/chaos_middleware.h"

#include "api/google_error.h"

namespace tpuemu::api {
namespace {

// Internal: set here only (a client's own value is dropped first). "<gRPC code> <message>".
constexpr char kHeader[] = "x-tpuemu-chaos-operation-error";

bool IsApiPath(const std::string& path) {
  return path.size() > 3 && path[0] == '/' && path[1] == 'v' && path[2] >= '0' && path[2] <= '9';
}

// The project a path names ("/v2/projects/p/…" -> "p"), else "*".
std::string ProjectOf(const std::string& path) {
  const std::string marker = "/projects/";
  std::size_t at = path.find(marker);
  if (at == std::string::npos) return "*";
  std::size_t start = at + marker.size();
  std::string project = path.substr(start, path.find('/', start) - start);
  return project.empty() || project == "-" ? "*" : project;
}

std::string ZoneOf(const std::string& path) {
  const std::string marker = "/locations/";
  std::size_t at = path.find(marker);
  if (at == std::string::npos) return "";
  std::size_t start = at + marker.size();
  return path.substr(start, path.find('/', start) - start);
}

}  // namespace

AsyncHandlerFn WithChaos(service::ChaosRules& rules, service::FaultListener listener,
                         AsyncHandlerFn inner) {
  return [&rules, listener = std::move(listener), inner = std::move(inner)](
             const HttpRequest& request, Responder respond) {
    if (!IsApiPath(request.path)) return inner(request, std::move(respond));
    std::optional<service::ChaosEffect> effect = rules.Match(request.method, request.path);
    if (!effect && !request.headers.count(kHeader)) return inner(request, std::move(respond));
    HttpRequest marked = request;  // copied only when a rule fired or a client forged the mark
    marked.headers.erase(kHeader);
    if (effect && listener) {
      listener({ProjectOf(request.path), ZoneOf(request.path), request.path, "CHAOS",
                "chaos rule '" + effect->rule_id + "' " +
                    (effect->operation_error ? "fails the Operation of " : "fails ") +
                    request.method + " " + request.path + " with " +
                    std::string(StatusCodeName(effect->status.code())) + ": " +
                    effect->status.message()});
    }
    if (effect && !effect->operation_error) {
      HttpResponse response = ErrorResponse(effect->status);
      response.route = "chaos";
      return respond(std::move(response));
    }
    if (effect) {
      marked.headers[kHeader] =
          std::to_string(static_cast<int>(effect->status.code())) + " " + effect->status.message();
    }
    inner(marked, std::move(respond));
  };
}

Status InjectedOperationFault(const HttpRequest& request) {
  std::optional<std::string> value = request.Header(kHeader);
  if (!value) return Status::Ok();
  std::size_t space = value->find(' ');
  int code = std::atoi(value->substr(0, space).c_str());
  if (code <= 0 || code > 16) return Status::Ok();
  return Status(static_cast<StatusCode>(code),
                space == std::string::npos ? "" : value->substr(space + 1));
}

}  // namespace tpuemu::api
