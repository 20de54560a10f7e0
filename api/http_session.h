// One HTTP/1.1 connection of HttpServer (internal to api/http_server.cpp and api/http_session.cpp).
//
// Shaped after Beast's advanced server example: the session owns its stream, keeps itself alive
// with shared_from_this while an operation, a timer or a Responder refers to it, and runs on its
// own strand (the socket's executor). Reading is DoRead/OnRead..., writing DoWrite/OnWrite; every
// error goes through Fail(ec, what); every end goes through Close().
//
// A request answered at once (the handler responds inside its call, as every synchronous route
// does) goes as Beast's http_server_async example has it: read, handle, write, and read the next
// request once the response is on the wire — no post to the strand for the response, and no read
// pending while it is written (which would cost a receive call that finds nothing on every
// request). A handler that answers later (a long-poll, a write offloaded to the writer threads)
// lets the read side go on: request N+1 is read while response N waits (pipelining, at most
// kPipelineLimit responses outstanding). So the connection's State says what the read side is
// doing, and WriteState whether a write is pending. Late responses wait in `in_flight_` and are
// written in request order.
//
// Threading: the public functions may be called from any thread (they post to the strand);
// everything else runs on the strand.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>

#include "api/http_message.h"
#include "api/http_server_core.h"
#include "api/http_types.h"
#include "base/status.h"

namespace tpuemu::api::http_internal {

class Session : public std::enable_shared_from_this<Session> {
 public:
  // `socket` was accepted on a strand of one of core's io_contexts. `counted`: the session counts
  // against max_connections (false for one that is only told 503).
  // `handler`, when given, answers this connection's requests instead of core's (a listener of
  // its own: HttpServer::AddListener). `budget`, when given, is the listener's own budget, which
  // already counted this session (for `budget_peer`); the session leaves it when it ends.
  Session(std::shared_ptr<ServerCore> core, boost::asio::ip::tcp::socket socket, bool counted,
          std::shared_ptr<const AsyncHandlerFn> handler = nullptr,
          std::shared_ptr<ListenerBudget> budget = nullptr, std::string budget_peer = "");
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Starts reading requests.
  void Run();
  // Over max_connections: answers 503 without reading a request, then closes.
  void Reject();
  // The server is stopping: reads no new request, closes once the outstanding ones are answered.
  void Drain();
  // The server's drain time is over: closes now; late responses are dropped.
  void Abort();

 private:
  using Clock = std::chrono::steady_clock;

  enum class State {
    kAwaitingRequest,  // read pending for the first byte of the next request (the idle timer runs
                       // while nothing is outstanding)
    kReadingHeader,    // read pending: a request has started, its header is being read
    kReadingBody,      // read pending: its body (same absolute read deadline)
    kReadPaused,       // no read until the write side is idle: a response is being written (the
                       // common case: the next request is read once it is on the wire), or
                       // kPipelineLimit responses are outstanding
    kAnswering,        // no read, none to come (EOF, Connection: close, an error answered, Stop):
                       // writing what is outstanding, then closing
    kLingering,        // final response written, FIN sent: draining the client's last bytes
    kClosed,
  };
  enum class WriteState { kIdle, kResponse, kContinue };

  // One request read and not yet answered on the wire.
  struct InFlight {
    std::string method;  // "" for an error the server answers itself (no access-log entry)
    std::string target;
    Clock::time_point start;
    bool keep_alive = false;
    std::optional<HttpResponse> response;  // set once the handler answered
  };
  struct Reply;  // the Responder's state: completes one request exactly once

  // Read side.
  void DoRead();
  void OnFirstBytes(boost::beast::error_code ec, std::size_t bytes);
  void DoReadHeader();
  void ParseHeader();
  void OnReadHeader(boost::beast::error_code ec, std::size_t bytes);
  void OnHeader();
  void OnReadBody(boost::beast::error_code ec, std::size_t bytes);
  void OnRequest();

  // Write side.
  void PostResponse(uint64_t seq, HttpResponse response);  // any thread
  void OnResponse(uint64_t seq, HttpResponse response);
  bool StoreResponse(uint64_t seq, HttpResponse response);  // false: the connection is gone
  void RespondAndClose(int http_status, const Status& status);
  void DoWrite();
  void HandOver(std::shared_ptr<ConnectionTakeover> takeover);
  void OnWrite(boost::beast::error_code ec, std::size_t bytes);
  void DoWriteContinue();
  void OnWriteContinue(boost::beast::error_code ec, std::size_t bytes);
  void WriteNextOrRead();

  // Timers, errors and the end of the connection.
  void ArmIdleTimer();
  void PauseIdleTimer();
  void WatchDeadlines();
  void CancelDeadlines();
  void OnDeadline(boost::beast::error_code ec);
  void Fail(boost::beast::error_code ec, std::string_view what);
  void MaybeFinish();
  void DoShutdown();
  void DoLinger();
  void OnLinger(boost::beast::error_code ec, std::size_t bytes);
  void Close();
  bool ReadPending() const;

  std::shared_ptr<ServerCore> core_;  // first member: destroyed last, after the socket and timer
  std::shared_ptr<const AsyncHandlerFn> handler_;  // null: core_->handler
  const boost::asio::any_io_executor strand_;
  boost::beast::tcp_stream stream_;
  // The idle and write deadlines (reads keep the stream's own). One wait on `deadline_timer_`
  // for the earlier of them, moved only when a deadline comes before it and re-armed by
  // OnDeadline when they moved later meanwhile: a busy connection does not add and cancel a timer
  // wait (and reprogram the timerfd) on every request and every response.
  boost::asio::steady_timer deadline_timer_;
  Clock::time_point idle_deadline_ = Clock::time_point::max();   // max(): not idle
  Clock::time_point write_deadline_ = Clock::time_point::max();  // max(): no write pending
  bool deadline_wait_ = false;  // a wait is pending on deadline_timer_.expiry()
  const bool counted_;
  const std::shared_ptr<ListenerBudget> budget_;  // null: counted (or not) against core's
  const std::string budget_peer_;
  std::string remote_address_;

  State state_ = State::kAwaitingRequest;
  WriteState write_state_ = WriteState::kIdle;
  boost::beast::flat_buffer buffer_;
  std::optional<BeastRequestParser> parser_;
  std::size_t header_bytes_ = 0;            // header bytes of the current request parsed so far
  std::map<uint64_t, InFlight> in_flight_;  // requests read, responses not yet written
  uint64_t next_seq_ = 0;                   // sequence number of the next request read
  uint64_t write_seq_ = 0;                  // sequence number of the next response to write
  std::optional<BeastResponse> out_;        // the response being written
  std::array<char, 4096> linger_buffer_{};
};

}  // namespace tpuemu::api::http_internal
