// Between Beast's messages and the router's plain values (api/http_types.h). Internal to the
// Beast translation units of api/ (the server's session) and the HTTP fuzzer, so that both build
// the very same HttpRequest from the same bytes.
#pragma once

#include <string>

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include "api/http_types.h"

namespace tpuemu::api {

using BeastRequest = boost::beast::http::request<boost::beast::http::string_body>;
using BeastResponse = boost::beast::http::response<boost::beast::http::string_body>;

// The router's request: method, target (path and query decoded by MakeRequest), body, header
// names lower-cased with repeated headers joined by ", ", and the peer's "address:port".
HttpRequest ToHttpRequest(BeastRequest&& message, std::string remote_address);

// The wire response: HTTP/1.1, `Server: tpuemud`, the content type and extra headers, the body
// with its Content-Length, and `Connection: close` unless `keep_alive`.
BeastResponse ToBeastResponse(HttpResponse&& response, bool keep_alive);

}  // namespace tpuemu::api
