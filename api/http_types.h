// Plain HTTP request/response values shared by the router, the handlers and the server.
//
// No Beast or Asio here on purpose: every handler file includes this header, and Beast costs
// seconds per translation unit. api/http_server.cpp converts between these and Beast's messages.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace tpuemu::api {

struct HttpRequest {
  std::string method;  // "GET"
  std::string target;  // raw request target, "/v2/projects/p/...?pageSize=2"
  std::string path;    // percent-decoded path, no query
  std::multimap<std::string, std::string> query;  // percent-decoded ('+' = space), repeats kept
  std::map<std::string, std::string> headers;     // names lower-cased; repeats joined by ", "
  std::string body;
  std::string remote_address;  // "127.0.0.1:53122"; empty for requests built in tests
  // Whether the caller may see every project's resources on an open path (GET /metrics): true
  // unless auth is on and the request carries no token granted every project ("*"). Set by
  // RequireAuth (api/auth.h); it only ever narrows what a handler shows.
  bool sees_every_project = true;
  // On an upgrade request (the terminal's WebSocket), with auth on: the `user` of its token
  // (api/auth.h); "" otherwise.
  std::string principal;

  // First value of a query parameter; nullopt when absent.
  std::optional<std::string> Query(std::string_view key) const;
  // Header by lower-case name; nullopt when absent.
  std::optional<std::string> Header(std::string_view lower_name) const;
};

// A response that takes the connection over instead of being written: a WebSocket's handshake
// (api/connection_takeover.h has the interface; Beast and Asio stay out of this header).
class ConnectionTakeover;

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra headers
  std::string route;  // matched route pattern for logs/metrics (not sent); "" when none matched
  // Set: the server writes nothing and hands the connection to it (after every earlier response
  // of the connection is written; an upgrade request is the last one read from it).
  std::shared_ptr<ConnectionTakeover> takeover;
};

HttpResponse JsonResponse(int status, const nlohmann::json& body);
HttpResponse JsonResponse(int status, std::string body);  // body is already serialized JSON
inline HttpResponse JsonResponse(int status, const char* body) {
  return JsonResponse(status, std::string(body));
}

// Values of the `{var}` segments of the matched route pattern, percent-decoded.
using PathParams = std::map<std::string, std::string, std::less<>>;

// Handlers get the request by const reference, valid only during the call: an AsyncHandler that
// answers later must copy what it needs.
// Completes a request exactly once, from any thread (long-polls complete later from a
// timer/worker). Copyable; calling it a second time is a bug that is logged and ignored.
using Responder = std::function<void(HttpResponse)>;
using Handler = std::function<HttpResponse(const HttpRequest&, const PathParams&)>;  // sync
using AsyncHandler = std::function<void(const HttpRequest&, const PathParams&, Responder)>;
// What the server calls for every request: Router::Dispatch bound to a router.
using AsyncHandlerFn = std::function<void(const HttpRequest&, Responder)>;

// "%41b+c" -> "Ab c" when plus_is_space, "Ab+c" otherwise. Malformed escapes ("%4", "%zz") are
// kept verbatim. The result may contain '/', NUL, ...: callers that build paths must check.
std::string PercentDecode(std::string_view text, bool plus_is_space);

// Builds a request from method + raw target (+ body): fills target, path and query.
// Used by the server for every request and by tests that call Router::Handle directly.
HttpRequest MakeRequest(std::string method, std::string target, std::string body = "");

// The items of a comma-separated header value ("a, b ,c" -> a, b, c), spaces around each
// trimmed, empty items dropped (Sec-WebSocket-Protocol's list, say). Views into `value`.
std::vector<std::string_view> HeaderItems(std::string_view value);

}  // namespace tpuemu::api
