#include "tests/support/http_client.h"

#include <array>
#include <optional>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace tpuemu::testing {

nlohmann::json ClientResponse::Json() const {
  return nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
}

std::string ClientResponse::Header(const std::string& lower_name) const {
  auto it = headers.find(lower_name);
  return it == headers.end() ? "" : it->second;
}

struct RawConnection::Impl {
  std::string host;
  uint16_t port;
  std::chrono::milliseconds timeout;
  net::io_context ioc;
  tcp::socket socket{ioc};
  beast::flat_buffer buffer;

  // Runs one async operation, cancelling it at the deadline: plain sockets, not tcp_stream,
  // because a tcp_stream timeout closes the socket and tests need to poll a live connection.
  template <typename Start>
  beast::error_code Run(std::chrono::milliseconds limit, Start start) {
    std::optional<beast::error_code> result;
    start([&result](beast::error_code ec, auto&&...) { result = ec; });
    ioc.restart();
    ioc.run_for(limit);
    if (!result) {
      beast::error_code ignored;
      socket.cancel(ignored);
      ioc.restart();
      ioc.run();
      return net::error::timed_out;
    }
    return *result;
  }

  static Status Error(std::string_view what, const beast::error_code& ec) {
    if (ec == net::error::timed_out) {
      return Status::DeadlineExceeded(std::string(what) + ": timed out");
    }
    return Status::Unavailable(std::string(what) + ": " + ec.message());
  }
};

RawConnection::RawConnection(std::string host, uint16_t port, std::chrono::milliseconds timeout)
    : impl_(std::make_unique<Impl>()) {
  impl_->host = std::move(host);
  impl_->port = port;
  impl_->timeout = timeout;
}

RawConnection::~RawConnection() { Close(); }

Status RawConnection::Connect() {
  Close();
  impl_->buffer.clear();
  beast::error_code ec;
  tcp::resolver resolver(impl_->ioc);
  auto endpoints = resolver.resolve(impl_->host, std::to_string(impl_->port), ec);
  if (ec) return Impl::Error("resolve", ec);
  ec = impl_->Run(impl_->timeout,
                  [&](auto handler) { net::async_connect(impl_->socket, endpoints, handler); });
  if (ec) {
    Close();
    return Impl::Error("connect", ec);
  }
  return Status::Ok();
}

bool RawConnection::is_open() const { return impl_->socket.is_open(); }

Status RawConnection::Send(std::string_view bytes) {
  beast::error_code ec = impl_->Run(impl_->timeout, [&](auto handler) {
    net::async_write(impl_->socket, net::buffer(bytes.data(), bytes.size()), handler);
  });
  return ec ? Impl::Error("send", ec) : Status::Ok();
}

Result<ClientResponse> RawConnection::ReadResponse() {
  http::response_parser<http::string_body> parser;
  parser.body_limit(64u << 20);
  beast::error_code ec = impl_->Run(impl_->timeout, [&](auto handler) {
    http::async_read(impl_->socket, impl_->buffer, parser, handler);
  });
  if (ec) return Impl::Error("read response", ec);
  http::response<http::string_body> message = parser.release();
  ClientResponse response;
  response.status = static_cast<int>(message.result_int());
  for (const auto& field : message) {
    std::string name(field.name_string());
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    response.headers[name] = std::string(field.value());
  }
  response.body = std::move(message.body());
  return response;
}

Result<std::string> RawConnection::ReadUntilClosed(std::chrono::milliseconds timeout) {
  std::string data = beast::buffers_to_string(impl_->buffer.data());
  impl_->buffer.consume(impl_->buffer.size());
  auto deadline = std::chrono::steady_clock::now() + timeout;
  std::array<char, 4096> chunk;
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return Status::DeadlineExceeded("server did not close the connection");
    std::size_t n = 0;
    beast::error_code ec = impl_->Run(left, [&](auto handler) {
      impl_->socket.async_read_some(net::buffer(chunk),
                                    [&n, handler](beast::error_code e, std::size_t bytes) mutable {
                                      n = bytes;
                                      handler(e);
                                    });
    });
    data.append(chunk.data(), n);
    if (ec == net::error::timed_out) {
      return Status::DeadlineExceeded("server did not close the connection");
    }
    if (ec) return data;  // EOF or reset: closed
  }
}

Status RawConnection::WaitForClose(std::chrono::milliseconds timeout) {
  Result<std::string> data = ReadUntilClosed(timeout);
  return data.ok() ? Status::Ok() : data.status();
}

void RawConnection::Close() {
  beast::error_code ec;
  if (impl_->socket.is_open()) {
    impl_->socket.shutdown(tcp::socket::shutdown_both, ec);
    impl_->socket.close(ec);
  }
}

//------------------------------------------------------------------------------

HttpClient::HttpClient(std::string host, uint16_t port, std::chrono::milliseconds timeout)
    : host_(host),
      port_(port),
      timeout_(timeout),
      client_(
          cli::Endpoint{
              .host = host, .port = port, .url = "http://" + host + ":" + std::to_string(port)},
          timeout, "tpuemu-test-client") {}

Result<ClientResponse> HttpClient::Request(std::string method, std::string target, std::string body,
                                           std::map<std::string, std::string> headers) {
  Result<cli::HttpReply> reply =
      client_.Request(method, target, body, std::chrono::milliseconds(0), headers);
  if (!reply.ok()) return reply.status();
  return ClientResponse{.status = reply->status,
                        .headers = std::move(reply->headers),
                        .body = std::move(reply->body)};
}

std::string HttpClient::RawExchange(std::string bytes) {
  RawConnection connection(host_, port_, timeout_);
  if (!connection.Connect().ok()) return "";
  if (!connection.Send(bytes).ok()) return "";
  Result<std::string> data = connection.ReadUntilClosed(timeout_);
  return data.ok() ? *data : "";
}

}  // namespace tpuemu::testing
