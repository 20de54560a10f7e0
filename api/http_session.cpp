#include "api/http_session.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <utility>

#include <spdlog/spdlog.h>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/bind_handler.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>

#include "api/connection_takeover.h"
#include "api/google_error.h"

namespace tpuemu::api::http_internal {

namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;

namespace {

// Responses a client may have outstanding on one connection before we stop reading from it.
constexpr std::size_t kPipelineLimit = 16;
// After the final response of a closing connection: how long unread client bytes are drained so
// that close() does not answer them with an RST that could destroy the response in flight.
constexpr auto kLingerTime = std::chrono::seconds(1);
constexpr std::size_t kReadChunkBytes = 4096;

// The session whose handler runs on this thread right now, inside OnRequest (on its strand): a
// response it gets then is stored at once and written by OnRequest, without a post.
thread_local const void* t_answering = nullptr;

bool IsParserError(const beast::error_code& ec) {
  return ec.category() == http::make_error_code(http::error::bad_target).category();
}

}  // namespace

//------------------------------------------------------------------------------

// Completes one request exactly once; a handler that drops its Responder without answering gets
// a 500 so the connection's pipeline never stalls.
struct Session::Reply {
  Reply(std::shared_ptr<Session> s, uint64_t q) : session(std::move(s)), seq(q) {}
  ~Reply() {
    if (!done.exchange(true)) {
      session->PostResponse(seq, ErrorResponse(Status::Internal("The request was dropped.")));
    }
  }
  void Complete(HttpResponse response) {
    if (done.exchange(true)) return;
    session->PostResponse(seq, std::move(response));
  }
  std::shared_ptr<Session> session;
  uint64_t seq;
  std::atomic<bool> done{false};
};

Session::Session(std::shared_ptr<ServerCore> core, tcp::socket socket, bool counted,
                 std::shared_ptr<const AsyncHandlerFn> handler,
                 std::shared_ptr<ListenerBudget> budget, std::string budget_peer)
    : core_(std::move(core)),
      handler_(std::move(handler)),
      strand_(socket.get_executor()),
      stream_(std::move(socket)),
      deadline_timer_(strand_),
      counted_(counted),
      budget_(std::move(budget)),
      budget_peer_(std::move(budget_peer)) {
  beast::error_code ec;
  tcp::endpoint peer = stream_.socket().remote_endpoint(ec);
  if (!ec) remote_address_ = peer.address().to_string() + ":" + std::to_string(peer.port());
  if (counted_) core_->Enter();
}

Session::~Session() {
  if (counted_) core_->Leave();
  if (budget_) budget_->Leave(budget_peer_);
}

void Session::Run() {
  // The accept completed on the acceptor's strand: hop onto this session's strand first.
  net::dispatch(strand_, beast::bind_front_handler(&Session::DoRead, shared_from_this()));
}

void Session::Reject() {
  net::dispatch(strand_, [self = shared_from_this()] {
    self->RespondAndClose(503, Status::Unavailable("Too many connections; try again later."));
  });
}

void Session::Drain() {
  net::post(strand_, [self = shared_from_this()] {
    // Only waiting for a request that may never come: nothing to finish.
    if (self->state_ == State::kAwaitingRequest && self->in_flight_.empty()) return self->Close();
    // Otherwise the read side sees `stopping` once its current request is in (DoRead).
    self->MaybeFinish();
  });
}

void Session::Abort() {
  net::post(strand_, beast::bind_front_handler(&Session::Close, shared_from_this()));
}

//------------------------------------------------------------------------------
// Read side

// Reads the next request, unless the pipeline is full or the server is stopping.
void Session::DoRead() {
  if (core_->stopping) {
    state_ = State::kAnswering;
    return MaybeFinish();
  }
  if (in_flight_.size() >= kPipelineLimit) {
    state_ = State::kReadPaused;
    return;
  }
  if (buffer_.size() > 0) return DoReadHeader();  // pipelined bytes are already here
  state_ = State::kAwaitingRequest;
  if (next_seq_ == 0) {
    // A new connection must start its request within read_timeout, as a started one must finish:
    // silent sockets would otherwise hold connection slots (up to a 503 for everyone) until
    // idle_timeout.
    stream_.expires_after(core_->options.read_timeout);
  } else {
    // Between requests, no stream deadline: the idle timer closes the connection, and only while
    // no response is outstanding (a long-poll may take minutes).
    stream_.expires_never();
  }
  ArmIdleTimer();
  stream_.async_read_some(buffer_.prepare(kReadChunkBytes),
                          beast::bind_front_handler(&Session::OnFirstBytes, shared_from_this()));
}

void Session::OnFirstBytes(beast::error_code ec, std::size_t bytes) {
  if (state_ != State::kAwaitingRequest) return;  // closed meanwhile
  PauseIdleTimer();
  // Stop came while we waited: this request is not read.
  if (core_->stopping) {
    state_ = State::kAnswering;
    return MaybeFinish();
  }
  // The client closed between requests (Beast's name for it, as http::async_read reports it).
  if (ec == net::error::eof) ec = http::error::end_of_stream;
  if (ec) return Fail(ec, "read");
  buffer_.commit(bytes);
  DoReadHeader();
}

// A request has started: all of it must arrive within read_timeout (slow-loris). The deadline is
// absolute, so it also covers the body read started in OnHeader.
void Session::DoReadHeader() {
  state_ = State::kReadingHeader;
  parser_.emplace();
  parser_->body_limit(core_->options.body_limit_bytes);
  header_bytes_ = 0;
  stream_.expires_after(core_->options.read_timeout);
  ParseHeader();
}

// Parses what is buffered and reads on while the header is incomplete. The header is read here
// rather than by http::async_read_header so that PutHeader can count all of its bytes against
// header_limit_bytes, however many reads it takes.
void Session::ParseHeader() {
  beast::error_code ec;
  std::size_t used =
      PutHeader(*parser_, buffer_.data(), core_->options.header_limit_bytes, &header_bytes_, ec);
  buffer_.consume(used);
  if (ec == http::error::need_more) {
    return stream_.async_read_some(
        buffer_.prepare(kReadChunkBytes),
        beast::bind_front_handler(&Session::OnReadHeader, shared_from_this()));
  }
  if (ec) return Fail(ec, "parse header");
  OnHeader();
}

void Session::OnReadHeader(beast::error_code ec, std::size_t bytes) {
  if (state_ != State::kReadingHeader) return;  // closed meanwhile
  // The client closed mid-request (Beast's name for it, as http::async_read reports it).
  if (ec == net::error::eof) ec = http::error::partial_message;
  if (ec) return Fail(ec, "read header");
  buffer_.commit(bytes);
  ParseHeader();
}

void Session::OnHeader() {
  if (parser_->is_done()) return OnRequest();
  state_ = State::kReadingBody;
  // curl sends `Expect: 100-continue` for bodies over 1 KiB and waits a second for it.
  bool wants_continue = beast::iequals(parser_->get()[http::field::expect], "100-continue");
  http::async_read(stream_, buffer_, *parser_,
                   beast::bind_front_handler(&Session::OnReadBody, shared_from_this()));
  // Only on an otherwise quiet connection: an interim response must not interleave with a
  // pipelined final one (the client then just sends its body after its own timeout).
  if (wants_continue && write_state_ == WriteState::kIdle && in_flight_.empty()) {
    DoWriteContinue();
  }
}

void Session::OnReadBody(beast::error_code ec, std::size_t) {
  if (state_ != State::kReadingBody) return;  // closed meanwhile
  if (ec) return Fail(ec, "read body");
  OnRequest();
}

// Hands a whole request to the handler; writes its response if it answered at once, and reads
// the next request once that is written, or at once when the handler answers later (pipelining).
void Session::OnRequest() {
  BeastRequest message = parser_->release();
  parser_.reset();
  // Nothing is read after an upgrade request: its handler may take the connection over.
  const bool upgrade = message.count(http::field::upgrade) > 0;
  bool keep_alive = message.keep_alive();
  HttpRequest request = ToHttpRequest(std::move(message), remote_address_);
  uint64_t seq = next_seq_++;
  in_flight_[seq] = InFlight{request.method, request.target, Clock::now(), keep_alive, {}};
  if (!keep_alive || upgrade) state_ = State::kAnswering;

  auto reply = std::make_shared<Reply>(shared_from_this(), seq);
  t_answering = this;
  try {
    const AsyncHandlerFn& handler = handler_ ? *handler_ : core_->handler;
    handler(request, [reply](HttpResponse r) { reply->Complete(std::move(r)); });
  } catch (const std::exception& e) {
    spdlog::error("http: handler for {} {} threw: {}", request.method, request.target, e.what());
    reply->Complete(ErrorResponse(Status::Internal("Internal error.")));
  }
  reply.reset();  // a handler that dropped its Responder: the 500 is stored now too
  t_answering = nullptr;
  DoWrite();
  if (!keep_alive || upgrade) return;
  if (write_state_ == WriteState::kIdle) return DoRead();
  state_ = State::kReadPaused;  // OnWrite reads on
}

//------------------------------------------------------------------------------
// Write side

// Any thread. Dropped once Stop has given up on in-flight requests.
void Session::PostResponse(uint64_t seq, HttpResponse response) {
  // Inside OnRequest's handler call, on this session's strand: OnRequest writes it.
  if (t_answering == this) {
    StoreResponse(seq, std::move(response));
    return;
  }
  core_->PostUnlessDrained(
      strand_, [self = shared_from_this(), seq, response = std::move(response)]() mutable {
        self->OnResponse(seq, std::move(response));
      });
}

void Session::OnResponse(uint64_t seq, HttpResponse response) {
  if (StoreResponse(seq, std::move(response))) WriteNextOrRead();
}

// Logs the response and keeps it for DoWrite.
bool Session::StoreResponse(uint64_t seq, HttpResponse response) {
  if (state_ == State::kLingering || state_ == State::kClosed) return false;
  auto it = in_flight_.find(seq);
  if (it == in_flight_.end() || it->second.response) return false;
  if (core_->on_access && !it->second.method.empty()) {
    std::chrono::duration<double> latency = Clock::now() - it->second.start;
    try {
      core_->on_access(AccessLogEntry{it->second.method, response.route, it->second.target,
                                      response.status, latency.count()});
    } catch (const std::exception& e) {
      spdlog::error("http: access log callback threw: {}", e.what());
    }
  }
  it->second.response = std::move(response);
  return true;
}

// Queues an error response behind the outstanding ones; no request is read after it and the
// connection closes once it is written.
void Session::RespondAndClose(int http_status, const Status& status) {
  state_ = State::kAnswering;
  uint64_t seq = next_seq_++;
  in_flight_[seq] = InFlight{"", "", Clock::now(), false, {}};
  if (StoreResponse(seq, ErrorResponse(http_status, status))) DoWrite();
}

// Writes the next response in request order, once its handler has answered.
void Session::DoWrite() {
  if (write_state_ != WriteState::kIdle) return;
  auto it = in_flight_.find(write_seq_);
  if (it == in_flight_.end() || !it->second.response) return;
  if (it->second.response->takeover) return HandOver(std::move(it->second.response->takeover));
  // While stopping, the last outstanding response tells the client to go away.
  bool keep_alive = it->second.keep_alive && !(core_->stopping && in_flight_.size() == 1);
  out_ = ToBeastResponse(std::move(*it->second.response), keep_alive);
  write_state_ = WriteState::kResponse;
  // On the socket itself: the stream's timer would add and cancel a wait on every response; the
  // write deadline is the session's (a pending read keeps the stream's deadline).
  write_deadline_ = Clock::now() + core_->options.write_timeout;
  WatchDeadlines();
  http::async_write(stream_.socket(), *out_,
                    beast::bind_front_handler(&Session::OnWrite, shared_from_this()));
}

// The socket goes to `takeover` with what was read past the request; this session ends
// without touching it (no shutdown, no close).
void Session::HandOver(std::shared_ptr<ConnectionTakeover> takeover) {
  state_ = State::kClosed;
  CancelDeadlines();
  in_flight_.clear();
  stream_.expires_never();
  takeover->Start(stream_.release_socket(), std::move(buffer_));
}

void Session::OnWrite(beast::error_code ec, std::size_t) {
  write_state_ = WriteState::kIdle;
  write_deadline_ = Clock::time_point::max();
  if (state_ == State::kClosed) return;
  if (ec) return Fail(ec, "write");
  bool keep_alive = out_->keep_alive();
  out_.reset();
  in_flight_.erase(write_seq_++);
  if (!keep_alive) return DoShutdown();
  WriteNextOrRead();
}

void Session::DoWriteContinue() {
  static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
  write_state_ = WriteState::kContinue;
  write_deadline_ = Clock::now() + core_->options.write_timeout;
  WatchDeadlines();
  net::async_write(stream_.socket(), net::buffer(kContinue.data(), kContinue.size()),
                   beast::bind_front_handler(&Session::OnWriteContinue, shared_from_this()));
}

void Session::OnWriteContinue(beast::error_code ec, std::size_t) {
  write_state_ = WriteState::kIdle;
  write_deadline_ = Clock::time_point::max();
  if (state_ == State::kClosed) return;
  if (ec) return Fail(ec, "write 100-continue");
  // A response may have become ready (an error answered while the body came in).
  WriteNextOrRead();
}

// The write side went idle or a response became ready: writes the next response if it is ready;
// else reads on if reading waited for the write side. Or ends the connection when all is done.
void Session::WriteNextOrRead() {
  DoWrite();
  if (state_ == State::kReadPaused && write_state_ == WriteState::kIdle) return DoRead();
  ArmIdleTimer();  // a read was pending and the last outstanding response is now written
  MaybeFinish();
}

//------------------------------------------------------------------------------
// Timers, errors and the end of the connection

// A connection waiting for a request with nothing outstanding is idle: closed after idle_timeout.
void Session::ArmIdleTimer() {
  if (state_ != State::kAwaitingRequest || !in_flight_.empty()) return;
  idle_deadline_ = Clock::now() + core_->options.idle_timeout;
  WatchDeadlines();
}

// A request has begun: not idle. A pending wait stays and finds nothing due (no cancel per
// request).
void Session::PauseIdleTimer() { idle_deadline_ = Clock::time_point::max(); }

// Makes sure a wait ends no later than the earliest deadline.
void Session::WatchDeadlines() {
  Clock::time_point due = std::min(idle_deadline_, write_deadline_);
  if (due == Clock::time_point::max()) return;
  if (deadline_wait_ && deadline_timer_.expiry() <= due) return;  // OnDeadline waits on
  deadline_wait_ = true;
  deadline_timer_.expires_at(due);  // cancels an earlier wait, if any
  deadline_timer_.async_wait(beast::bind_front_handler(&Session::OnDeadline, shared_from_this()));
}

// The connection ends (or is handed over): the wait goes, and its reference to the session.
void Session::CancelDeadlines() {
  idle_deadline_ = write_deadline_ = Clock::time_point::max();
  deadline_timer_.cancel();
}

// Any wake checks the deadlines against the clock, so a stale one (replaced, or moved) is harmless.
void Session::OnDeadline(beast::error_code ec) {
  if (ec == net::error::operation_aborted || state_ == State::kClosed) return;
  deadline_wait_ = false;
  Clock::time_point now = Clock::now();
  if (now >= write_deadline_) {
    spdlog::debug("http: write: {}", beast::error_code(beast::error::timeout).message());
    return Close();  // the pending write completes with operation_aborted
  }
  if (now >= idle_deadline_) return Close();
  WatchDeadlines();  // idle again since, or writing, with a later deadline
}

// The one failure path, for reads and writes alike. The parser's errors are answered in Google's
// envelope and the connection closes after the answer; a client that closed gets what is still
// outstanding; anything else (a timeout, a reset, our own close) ends the connection at once:
// nobody is left to answer.
void Session::Fail(beast::error_code ec, std::string_view what) {
  if (ec == http::error::end_of_stream || ec == http::error::partial_message) {
    state_ = State::kAnswering;
    return MaybeFinish();
  }
  if (ec == http::error::body_limit) {
    return RespondAndClose(
        413, Status::InvalidArgument("Request body exceeds " +
                                     std::to_string(core_->options.body_limit_bytes) + " bytes."));
  }
  if (ec == http::error::header_limit) {
    return RespondAndClose(431, Status::InvalidArgument(
                                    "Request headers exceed " +
                                    std::to_string(core_->options.header_limit_bytes) + " bytes."));
  }
  if (IsParserError(ec)) {
    return RespondAndClose(400, Status::InvalidArgument("Malformed HTTP request: " + ec.message()));
  }
  if (ec != net::error::operation_aborted) spdlog::debug("http: {}: {}", what, ec.message());
  Close();
}

// Once no request will be read and every response is written, the connection ends gracefully.
void Session::MaybeFinish() {
  bool reading_done =
      state_ == State::kAnswering || (state_ == State::kAwaitingRequest && core_->stopping);
  if (!reading_done || !in_flight_.empty() || write_state_ != WriteState::kIdle) return;
  DoShutdown();
}

// After the final response: FIN, then drain what the client still sends for kLingerTime.
void Session::DoShutdown() {
  if (state_ == State::kLingering || state_ == State::kClosed) return;
  // A pending read means the kernel holds no unread bytes: a plain close sends no RST.
  if (ReadPending()) return Close();
  state_ = State::kLingering;
  CancelDeadlines();
  beast::error_code ec;
  stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
  stream_.expires_after(kLingerTime);
  DoLinger();
}

void Session::DoLinger() {
  stream_.async_read_some(net::buffer(linger_buffer_),
                          beast::bind_front_handler(&Session::OnLinger, shared_from_this()));
}

void Session::OnLinger(beast::error_code ec, std::size_t) {
  if (state_ != State::kLingering) return;
  if (ec) return Close();  // the client closed too, or kLingerTime is over
  DoLinger();
}

// The one place a connection ends: after lingering, on an error or timeout, on Stop's deadline.
void Session::Close() {
  if (state_ == State::kClosed) return;
  state_ = State::kClosed;
  CancelDeadlines();
  beast::error_code ec;
  stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
  stream_.close();
}

bool Session::ReadPending() const {
  return state_ == State::kAwaitingRequest || state_ == State::kReadingHeader ||
         state_ == State::kReadingBody || state_ == State::kLingering;
}

}  // namespace tpuemu::api::http_internal
