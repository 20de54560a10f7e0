// HTTP/1.1 server on Boost.Beast (kept out of this header: the listener is http_server.cpp, a
// connection http_session.cpp, the Beast <-> HttpRequest conversion http_message.cpp).
//
// Keep-alive; pipelined requests are answered in order (up to 16 outstanding per connection).
// Limits on everything a client controls: body size (413), header size (431: the request line,
// every field and the blank line together), malformed HTTP (400) — each answered in Google's error
// envelope, then the connection is closed. A request that does not arrive whole within
// read_timeout of its first byte, a new connection that sends nothing for read_timeout, and a
// keep-alive connection silent for idle_timeout with no response outstanding are closed; beyond
// max_connections a new connection gets 503 + `Connection: close`.
//
// The handler runs on the connection's strand (an IO thread: it must not block); the Responder it
// receives may be called from ANY thread, later (long-polls). A Responder keeps its connection
// alive until it is called or destroyed; if the client is gone by then, the response is dropped.
// `on_access` is called once per answered request from IO threads (must be thread-safe).
//
// Lifecycle: Start() once; Stop() (also run by the destructor) stops accepting, lets in-flight
// requests finish for up to `drain`, closes idle keep-alive connections, then joins the IO
// threads. Responses arriving after the drain are dropped. Never call Stop from a handler or an
// IO thread (it joins them). `Expect: 100-continue` is honoured on a quiet connection.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "api/http_types.h"
#include "base/status.h"

namespace tpuemu::api {

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 0;  // 0 = ephemeral; see HttpServer::port()
  int io_threads = 2;
  std::size_t body_limit_bytes = 1 << 20;
  std::size_t header_limit_bytes = 16 << 10;
  std::chrono::milliseconds read_timeout{30000};   // one request, from its first byte; and the
                                                   // first byte on a new connection
  std::chrono::milliseconds idle_timeout{60000};   // keep-alive connection with no request
  std::chrono::milliseconds write_timeout{30000};  // to hand one response to a slow reader
  int max_connections = 1024;
};

// A listener's own connection budget (AddListener on a socket): 0 = none of that kind.
struct ListenerLimits {
  int max_connections = 0;           // open connections of this listener in all
  int max_connections_per_peer = 0;  // from one peer address (a worker's)
};

struct AccessLogEntry {
  std::string method;
  std::string route;   // matched pattern ("" when none), never the raw path
  std::string target;  // raw target, for humans
  int status = 0;
  double latency_seconds = 0;  // request fully read -> response handed to the connection
};

class HttpServer {
 public:
  HttpServer(HttpServerOptions options, AsyncHandlerFn handler,
             std::function<void(const AccessLogEntry&)> on_access = {});
  ~HttpServer();  // Stop()
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds, listens and starts the IO threads. Errors (UNAVAILABLE, message naming host:port):
  // bad host, port in use, ... FAILED_PRECONDITION when called twice.
  Status Start();
  // The bound port (after a successful Start), 0 before.
  uint16_t port() const;
  // Graceful and idempotent; see the header comment.
  void Stop(std::chrono::milliseconds drain = std::chrono::seconds(10));
  // Connections currently open and counted against max_connections.
  int active_connections() const;

  // Listens on host:port as well (after Start), answering that listener's requests with
  // `handler` instead of the server's, under the same limits and IO threads (a TPU VM worker's
  // metadata server on its own address). UNAVAILABLE naming host:port when it cannot bind;
  // ALREADY_EXISTS when that address is listened on already.
  Status AddListener(const std::string& host, uint16_t port, AsyncHandlerFn handler);
  // Stops accepting on host:port; its open connections carry on until they end. Unknown
  // addresses are ignored.
  void RemoveListener(const std::string& host, uint16_t port);
  // Serves `listening_fd` — a bound, listening TCP socket made elsewhere (in a worker's slice
  // network: sandbox::SliceNetwork::Listen), which the server takes over — under the name `key`,
  // answering with `handler`. Its connections count against `limits` instead of
  // max_connections (a connection over them gets 503), so that what it serves cannot starve the
  // API or another listener. The fd is closed on failure too. ALREADY_EXISTS for a used key.
  Status AddListener(int listening_fd, const std::string& key, AsyncHandlerFn handler,
                     ListenerLimits limits);
  // Stops accepting on the listener named `key` (either form); unknown keys are ignored.
  void RemoveListener(const std::string& key);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tpuemu::api
