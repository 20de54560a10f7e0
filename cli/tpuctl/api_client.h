// ApiClient: tpuctl's view of the tpuemud REST API (JSON in, JSON out) and tpuctl's exit codes.
//
// Call() returns the parsed JSON of a 2xx reply. Any other reply becomes the Status of Google's
// error envelope ({"error":{"code","message","status"}}: code from `status`, message verbatim);
// a reply without an envelope becomes UNKNOWN with the HTTP status and body. A transport failure
// becomes UNAVAILABLE "cannot reach tpuemud at <endpoint>: <why>" — and IsUnreachable() tells it
// from an UNAVAILABLE the API itself returned. Not thread-safe (one HttpClient).
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "cli/tpuctl/http_client.h"

namespace tpuemu::cli {

// tpuctl's exit codes (README "tpuctl" section). Job states map like the service's exit codes.
inline constexpr int kExitOk = 0;
inline constexpr int kExitJobFailed = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitApiError = 3;
inline constexpr int kExitUnreachable = 4;
inline constexpr int kExitJobTimedOut = 124;
inline constexpr int kExitJobCancelled = 130;

// "INVALID_ARGUMENT" -> kInvalidArgument; unknown names -> kUnknown.
StatusCode StatusCodeFromName(std::string_view name);
// The Status of an HTTP error reply (Google's envelope when present).
Status StatusFromReply(int http_status, const std::string& body);

class ApiClient {
 public:
  explicit ApiClient(Endpoint endpoint) : http_(std::move(endpoint)) {}

  // `path` is absolute ("/v2/projects/p/..."), query included. `body` empty = no body.
  Result<nlohmann::json> Call(const std::string& method, const std::string& path,
                              const nlohmann::json& body = nullptr,
                              std::chrono::milliseconds timeout = std::chrono::milliseconds(0));
  Result<nlohmann::json> Get(const std::string& path,
                             std::chrono::milliseconds timeout = std::chrono::milliseconds(0)) {
    return Call("GET", path, nullptr, timeout);
  }

  bool IsUnreachable(const Status& status) const;
  const Endpoint& endpoint() const { return http_.endpoint(); }

 private:
  HttpClient http_;
};

// Percent-encodes a query value (RFC 3986 unreserved characters pass through).
std::string UrlEncode(std::string_view value);

}  // namespace tpuemu::cli
