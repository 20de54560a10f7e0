#include "cli/tpuctl/http_client.h"

#include <cctype>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace tpuemu::cli {

Result<Endpoint> Endpoint::Parse(const std::string& url) {
  auto bad = [&url](const std::string& why) {
    return Status::InvalidArgument("endpoint \"" + url + "\" " + why +
                                   " (expected http://HOST[:PORT], e.g. http://127.0.0.1:8470)");
  };
  const std::string scheme = "http://";
  if (url.rfind(scheme, 0) != 0) {
    return bad(url.rfind("https://", 0) == 0 ? "uses https, which tpuemud does not serve"
                                             : "is not an http:// URL");
  }
  Endpoint e;
  e.url = url;
  std::string rest = url.substr(scheme.size());
  size_t slash = rest.find('/');
  std::string authority = rest.substr(0, slash);
  if (slash != std::string::npos) {
    e.prefix = rest.substr(slash);
    while (!e.prefix.empty() && e.prefix.back() == '/') e.prefix.pop_back();
  }
  size_t colon = authority.rfind(':');
  if (colon != std::string::npos && authority.find(']') == std::string::npos) {
    std::string port = authority.substr(colon + 1);
    e.host = authority.substr(0, colon);
    try {
      size_t used = 0;
      int value = std::stoi(port, &used);
      if (used != port.size() || value <= 0 || value > 65535) return bad("has a bad port");
      e.port = static_cast<uint16_t>(value);
    } catch (const std::exception&) {
      return bad("has a bad port");
    }
  } else {
    e.host = authority;
  }
  if (e.host.empty()) return bad("has no host");
  return e;
}

struct HttpClient::Connection {
  net::io_context ioc;
  beast::tcp_stream stream{ioc};
  beast::flat_buffer buffer;
};

HttpClient::HttpClient(Endpoint endpoint, std::chrono::milliseconds timeout, std::string user_agent)
    : endpoint_(std::move(endpoint)), timeout_(timeout), user_agent_(std::move(user_agent)) {}

HttpClient::~HttpClient() {
  if (connection_) {
    beast::error_code ignored;
    connection_->stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
  }
}

Result<HttpReply> HttpClient::Request(const std::string& method, const std::string& target,
                                      const std::string& body, std::chrono::milliseconds timeout,
                                      const HttpHeaders& headers) {
  if (timeout.count() <= 0) timeout = timeout_;
  http::request<http::string_body> request;
  request.method_string(method);
  request.target(endpoint_.prefix + target);
  request.version(11);
  request.set(http::field::host, endpoint_.host + ":" + std::to_string(endpoint_.port));
  request.set(http::field::user_agent, user_agent_);
  request.set(http::field::accept, "application/json");
  if (!body.empty()) request.set(http::field::content_type, "application/json");
  for (const auto& [name, value] : headers) request.set(name, value);
  request.body() = body;
  request.prepare_payload();

  // A kept-alive connection may have been closed by the server since: retry once on a fresh one.
  for (int attempt = 0; attempt < 2; ++attempt) {
    const bool reused = connection_ != nullptr;
    if (!reused) {
      auto fresh = std::make_unique<Connection>();
      beast::error_code ec;
      tcp::resolver resolver(fresh->ioc);
      auto endpoints = resolver.resolve(endpoint_.host, std::to_string(endpoint_.port), ec);
      if (ec) return Status::Unavailable("resolve " + endpoint_.host + ": " + ec.message());
      fresh->stream.expires_after(timeout);
      fresh->stream.connect(endpoints, ec);
      if (ec) {
        if (ec == beast::error::timeout) return Status::DeadlineExceeded("connect: timed out");
        return Status::Unavailable("connect: " + ec.message());
      }
      connection_ = std::move(fresh);
      ++connections_opened_;
    }
    beast::error_code ec;
    connection_->stream.expires_after(timeout);
    http::write(connection_->stream, request, ec);
    http::response_parser<http::string_body> parser;
    parser.body_limit(64u << 20);
    if (!ec) http::read(connection_->stream, connection_->buffer, parser, ec);
    if (ec) {
      connection_.reset();
      if (ec == beast::error::timeout) {
        return Status::DeadlineExceeded(method + " " + target + ": timed out after " +
                                        std::to_string(timeout.count()) + " ms");
      }
      if (reused) continue;
      return Status::Unavailable(method + " " + target + ": " + ec.message());
    }
    http::response<http::string_body> response = parser.release();
    HttpReply reply;
    reply.status = static_cast<int>(response.result_int());
    for (const auto& field : response) {
      std::string name(field.name_string());
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      auto [it, inserted] = reply.headers.emplace(name, std::string(field.value()));
      if (!inserted) it->second += ", " + std::string(field.value());
    }
    reply.body = std::move(response.body());
    if (!response.keep_alive()) connection_.reset();
    return reply;
  }
  return Status::Unavailable(method + " " + target + ": the connection was closed");
}

}  // namespace tpuemu::cli
