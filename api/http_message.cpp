#include "api/http_message.h"

#include <cctype>
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
