#include "api/google_error.h"

#include <algorithm>
#include <cstdio>

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

HttpResponse RetryLaterResponse(const std::string& message, int64_t retry_delay_ms) {
  const Status status = Status::ResourceExhausted(message);
  nlohmann::json body = ErrorBody(429, status);
  char delay[32];
  std::snprintf(delay, sizeof delay, "%lld.%03llds", static_cast<long long>(retry_delay_ms / 1000),
                static_cast<long long>(retry_delay_ms % 1000));
  body["error"]["details"].push_back(
      {{"@type", "type.googleapis.com/google.rpc.RetryInfo"}, {"retryDelay", delay}});
  HttpResponse response = JsonResponse(429, body);
  response.headers.emplace_back(
      "Retry-After", std::to_string(std::max<int64_t>(1, (retry_delay_ms + 999) / 1000)));
  return response;
}

}  // namespace tpuemu::api
