// The project's HTTP/1.1 client (tpuctl and the tests): small, synchronous, one keep-alive
// connection (Beast stays inside http_client.cpp so the files that use it compile fast).
//
// Endpoint::Parse accepts "http://host[:port][/prefix]" (default port 80); anything else is
// INVALID_ARGUMENT naming the endpoint. HttpClient::Request sends one request and returns the
// status and body of any HTTP reply (4xx/5xx included: the caller reads Google's error envelope).
// Transport failures come back as UNAVAILABLE ("connect: Connection refused") and timeouts as
// DEADLINE_EXCEEDED. A reused connection the server has closed in between (idle timeout) is
// reopened once. Not thread-safe: one client per thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "base/status.h"

namespace tpuemu::cli {

struct Endpoint {
  std::string host;
  uint16_t port = 80;
  std::string prefix;  // "" or "/base" without a trailing slash
  std::string url;     // as given, for messages

  static Result<Endpoint> Parse(const std::string& url);
};

struct HttpReply {
  int status = 0;
  std::map<std::string, std::string> headers;  // names lower-case; repeats joined by ", "
  std::string body;
};

// Request headers by name; they replace the client's defaults (User-Agent, Accept, Content-Type).
using HttpHeaders = std::map<std::string, std::string>;

class HttpClient {
 public:
  explicit HttpClient(Endpoint endpoint,
                      std::chrono::milliseconds timeout = std::chrono::seconds(30),
                      std::string user_agent = "tpuctl");
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // `target` is the path + query (the endpoint's prefix is prepended). `timeout` 0 = default.
  Result<HttpReply> Request(const std::string& method, const std::string& target,
                            const std::string& body = "",
                            std::chrono::milliseconds timeout = std::chrono::milliseconds(0),
                            const HttpHeaders& headers = {});

  const Endpoint& endpoint() const { return endpoint_; }
  // TCP connections opened so far (1 after many requests = keep-alive reuse).
  int connections_opened() const { return connections_opened_; }

 private:
  struct Connection;
  Endpoint endpoint_;
  std::chrono::milliseconds timeout_;
  std::string user_agent_;
  std::unique_ptr<Connection> connection_;
  int connections_opened_ = 0;
};

}  // namespace tpuemu::cli
