#include "api/http_message.h"

#include <cctype>
#include <cstdint>
#include <utility>

namespace tpuemu::api {

namespace http = boost::beast::http;

HttpRequest ToHttpRequest(BeastRequest&& message, std::string remote_address) {
  HttpRequest request = MakeRequest(std::string(message.method_string()),
                                    std::string(message.target()), std::move(message.body()));
  for (const auto& field : message) {
    std::string name(field.name_string());
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    auto [it, inserted] = request.headers.emplace(name, std::string(field.value()));
    if (!inserted) it->second += ", " + std::string(field.value());
  }
  request.remote_address = std::move(remote_address);
  return request;
}

std::size_t PutHeader(BeastRequestParser& parser, boost::asio::const_buffer data, std::size_t limit,
                      std::size_t* header_bytes, boost::beast::error_code& ec) {
  if (*header_bytes >= limit) {  // a caller that went on after header_limit
    ec = http::error::header_limit;
    return 0;
  }
  // What is left of the budget bounds how far the parser looks for the end of the header (it
  // reports header_limit itself when the unconsumed bytes reach it without one).
  parser.header_limit(static_cast<std::uint32_t>(limit - *header_bytes));
  // An eager parser would run on into the body within this put(), counting body bytes as header.
  bool eager = parser.eager();
  parser.eager(false);
  std::size_t used = parser.put(data, ec);
  parser.eager(eager);
  *header_bytes += used;
  // One put() checks the request line and the fields against the limit separately; and a header
  // unfinished at exactly the limit would otherwise wait for bytes that cannot fit.
  if ((!ec && *header_bytes > limit) || (ec == http::error::need_more && *header_bytes >= limit)) {
    ec = http::error::header_limit;
  }
  return used;
}

BeastResponse ToBeastResponse(HttpResponse&& response, bool keep_alive) {
  BeastResponse message;
  message.version(11);
  message.result(static_cast<unsigned>(response.status));
  // Not in Beast's table of reasons: Google's code for a request the client cancelled.
  if (response.status == 499) message.reason("Client Closed Request");
  message.set(http::field::server, "tpuemud");
  message.set(http::field::content_type, response.content_type);
  for (const auto& [name, value] : response.headers) message.insert(name, value);
  message.body() = std::move(response.body);
  message.keep_alive(keep_alive);
  message.prepare_payload();
  return message;
}

}  // namespace tpuemu::api
