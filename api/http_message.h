// Between Beast's messages and the router's plain values (api/http_types.h). Internal to the
// Beast translation units of api/ (the server's session) and the HTTP fuzzer, so that both build
// the very same HttpRequest from the same bytes.
#pragma once

#include <cstddef>
#include <string>

#include <boost/asio/buffer.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include "api/http_types.h"

namespace tpuemu::api {

using BeastRequest = boost::beast::http::request<boost::beast::http::string_body>;
using BeastResponse = boost::beast::http::response<boost::beast::http::string_body>;
using BeastRequestParser = boost::beast::http::request_parser<boost::beast::http::string_body>;

// Feeds `data` to a parser whose header is not complete yet and returns how many bytes it used
// (the caller consumes them). `*header_bytes` carries the header bytes of the same request used by
// earlier calls, so the limit covers the whole header — request line, every field and the blank
// line — however many reads it arrives in: Beast's own header_limit only bounds the bytes one
// put() call has not consumed yet, so many small fields arriving over several reads passed it.
// `ec`: http::error::header_limit once the header exceeds `limit` bytes; need_more while it is
// incomplete and within the limit; the parser's own errors (400s); success once it is complete.
std::size_t PutHeader(BeastRequestParser& parser, boost::asio::const_buffer data, std::size_t limit,
                      std::size_t* header_bytes, boost::beast::error_code& ec);

// The router's request: method, target (path and query decoded by MakeRequest), body, header
// names lower-cased with repeated headers joined by ", ", and the peer's "address:port".
HttpRequest ToHttpRequest(BeastRequest&& message, std::string remote_address);

// The wire response: HTTP/1.1, `Server: tpuemud`, the content type and extra headers, the body
// with its Content-Length, and `Connection: close` unless `keep_alive`.
BeastResponse ToBeastResponse(HttpResponse&& response, bool keep_alive);

}  // namespace tpuemu::api
