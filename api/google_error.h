// Google's error envelope (AIP-193): the ONE place a tpuemu::Status becomes an HTTP response.
//
//   {"error":{"code":404,"message":"...","status":"NOT_FOUND","details":[{"@type":
//     "type.googleapis.com/google.rpc.ErrorInfo","reason":"NOT_FOUND",
//     "domain":"tpu.googleapis.com","metadata":{}}]}}
//
// `code` in the body is the HTTP status (inside Operation.error it is the gRPC number instead;
// that is service/'s business). Mapping: docs/api-fidelity.md §4.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "api/http_types.h"
#include "base/status.h"

namespace tpuemu::api {

// INVALID_ARGUMENT/FAILED_PRECONDITION/OUT_OF_RANGE 400, UNAUTHENTICATED 401,
// PERMISSION_DENIED 403, NOT_FOUND 404, ALREADY_EXISTS/ABORTED 409, RESOURCE_EXHAUSTED 429,
// CANCELLED 499, UNKNOWN/INTERNAL/DATA_LOSS 500, UNIMPLEMENTED 501, UNAVAILABLE 503,
// DEADLINE_EXCEEDED 504; OK 200.
int HttpStatusFor(StatusCode code);

// The error response for `status`. An OK status is a caller bug: it yields a 500 INTERNAL
// envelope saying so rather than a misleading success.
HttpResponse ErrorResponse(const Status& status);

// Same envelope with an HTTP status the canonical mapping cannot express (405, 413, 431): the
// `status` string still comes from `status.code()` so Google clients classify it sensibly.
HttpResponse ErrorResponse(int http_status, const Status& status);

// 429 RESOURCE_EXHAUSTED for a write pushed back because the store is behind: the envelope with a
// google.rpc.RetryInfo detail ({"retryDelay": "0.250s"}, which Google's client libraries honour)
// and a Retry-After header (whole seconds, at least 1).
HttpResponse RetryLaterResponse(const std::string& message, int64_t retry_delay_ms);

// Just the JSON body, for callers that embed it (e.g. tests comparing envelopes).
nlohmann::json ErrorBody(int http_status, const Status& status);

}  // namespace tpuemu::api
