// HTTP for tests. HttpClient is the project's one HTTP client (cli/tpuctl/http_client.h, which
// tpuctl uses) with a test-friendly reply: it reuses one keep-alive connection across Request
// calls and reconnects once when the server closed it in between. RawConnection is not an HTTP
// client but a socket driven byte by byte, for malformed-input, pipelining, timeout and
// slow-client tests. Every operation has a deadline (default 10 s) so a broken server fails a test
// instead of hanging it. Errors come back as Status: UNAVAILABLE for connect/IO failures,
// DEADLINE_EXCEEDED for timeouts. Not thread-safe: one object per thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "cli/tpuctl/http_client.h"

namespace tpuemu::testing {

struct ClientResponse {
  int status = 0;
  std::map<std::string, std::string> headers;  // names lower-case
  std::string body;
  // Parsed body; a discarded value (is_discarded()) when the body is not JSON.
  nlohmann::json Json() const;
  std::string Header(const std::string& lower_name) const;  // "" when absent
};

// One TCP connection, driven byte by byte.
class RawConnection {
 public:
  RawConnection(std::string host, uint16_t port,
                std::chrono::milliseconds timeout = std::chrono::seconds(10));
  ~RawConnection();
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  Status Connect();
  bool is_open() const;
  Status Send(std::string_view bytes);
  // Reads exactly one HTTP response (bytes after it stay buffered for the next call).
  Result<ClientResponse> ReadResponse();
  // Reads until the server closes the connection; returns everything read (buffered bytes too).
  // DEADLINE_EXCEEDED if the server keeps it open past `timeout`.
  Result<std::string> ReadUntilClosed(std::chrono::milliseconds timeout);
  // OK when the server closes (EOF or reset) within `timeout`, discarding data;
  // DEADLINE_EXCEEDED otherwise — the connection stays usable in that case.
  Status WaitForClose(std::chrono::milliseconds timeout);
  void Close();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

class HttpClient {
 public:
  HttpClient(std::string host, uint16_t port,
             std::chrono::milliseconds timeout = std::chrono::seconds(10));

  Result<ClientResponse> Request(std::string method, std::string target, std::string body = "",
                                 std::map<std::string, std::string> headers = {});
  // Sends `bytes` on a fresh connection and returns all the server sent until it closed (or
  // until the timeout). Connection failures return "".
  std::string RawExchange(std::string bytes);

  // TCP connections opened so far by Request (1 after many requests = keep-alive reuse).
  int connections_opened() const { return client_.connections_opened(); }

 private:
  std::string host_;
  uint16_t port_;
  std::chrono::milliseconds timeout_;
  cli::HttpClient client_;
};

}  // namespace tpuemu::testing
