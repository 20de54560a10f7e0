#include "api/google_error.h"

namespace tpuemu::api {

int HttpStatusFor(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return 200;
    case StatusCode::kInvalidArgument:
    case StatusCode::kFailedPrecondition:
    case StatusCode::kOutOfRange:
      return 400;
    case StatusCode::kUnauthenticated:
      return 401;
    case StatusCode::kPermissionDenied:
      return 403;
    case StatusCode::kNotFound:
      return 404;
    case StatusCode::kAlreadyExists:
    case StatusCode::kAborted:
      return 409;
    case StatusCode::kResourceExhausted:
      return 429;
    case StatusCode::kCancelled:
      return 499;  // Google's "client closed request"
    case StatusCode::kUnknown:
    case StatusCode::kInternal:
    case StatusCode::kDataLoss:
      return 500;
    case StatusCode::kUnimplemented:
      return 501;
    case StatusCode::kUnavailable:
      return 503;
    case StatusCode::kDeadlineExceeded:
      return 504;
  }
  return 500;
}

nlohmann::json ErrorBody(int http_status, const Status& status) {
  std::string name(StatusCodeName(status.code()));
  nlohmann::json info = {{"@type", "type.googleapis.com/google.rpc.ErrorInfo"},
                         {"reason", name},
                         {"domain", "tpu.googleapis.com"},
                         {"metadata", nlohmann::json::object()}};
  return {{"error",
           {{"code", http_status},
            {"message", status.message()},
            {"status", name},
            {"details", nlohmann::json::array({info})}}}};
}

HttpResponse ErrorResponse(int http_status, const Status& status) {
  if (status.ok()) {
    return ErrorResponse(500, Status::Internal("ErrorResponse called with an OK status"));
  }
  return JsonResponse(http_status, ErrorBody(http_status, status));
}

HttpResponse ErrorResponse(const Status& status) {
  return ErrorResponse(HttpStatusFor(status.code()), status);
}

}  // namespace tpuemu::api
