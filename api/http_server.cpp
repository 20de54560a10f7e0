// The one translation unit of the daemon that includes Boost.Beast (and Asio).
// Structure after Beast's advanced_server example: an acceptor, and a Session per connection that
// owns its stream, keeps itself alive through shared_from_this and runs on its own strand.
#include "api/http_server.h"

#include <array>
#include <atomic>
#include <cctype>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include <spdlog/spdlog.h>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "api/google_error.h"

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using Clock = std::chrono::steady_clock;

namespace tpuemu::api {
namespace {

// Responses a client may have outstanding on one connection before we stop reading from it.
constexpr std::size_t kPipelineLimit = 16;
// After the final response of a closing connection: how long unread client bytes are drained so
// that close() does not answer them with an RST that could destroy the response in flight.
constexpr auto kLingerTime = std::chrono::seconds(1);
constexpr std::size_t kReadChunkBytes = 4096;

//------------------------------------------------------------------------------

// State shared by the server and its sessions. A session keeps the Core (and so the io_context its
// socket lives on) alive while a Responder held by another thread still references the session.
// One io_context per IO thread (Beast's "io_context per CPU" layout): a session lives on one of
// them, so a handler posted on its own thread never wakes another thread, as a shared io_context's
// scheduler does on every post (a futex wake and a context switch per request on 2 cores).
struct Core {
  Core(HttpServerOptions o, AsyncHandlerFn h, std::function<void(const AccessLogEntry&)> a)
      : options(std::move(o)), handler(std::move(h)), on_access(std::move(a)) {
    for (int i = 0; i < std::max(1, options.io_threads); ++i) {
      iocs.push_back(std::make_unique<net::io_context>(1));
    }
  }

  // The io_context for the next accepted connection (round-robin; called on the acceptor's strand).
  net::io_context& NextIoContext() { return *iocs[next_ioc++ % iocs.size()]; }

  std::vector<std::unique_ptr<net::io_context>> iocs;  // fixed after construction
  std::size_t next_ioc = 0;                            // touched only on the acceptor's strand
  const HttpServerOptions options;
  const AsyncHandlerFn handler;
  const std::function<void(const AccessLogEntry&)> on_access;
  std::atomic<bool> stopping{false};

  std::mutex mu;
  std::condition_variable drained;  // notified whenever `active` drops
  int active = 0;                   // guarded by mu: counted sessions alive
  bool accepting_posts = true;      // guarded by mu: false once Stop gave up on in-flight requests
};

bool IsHttpError(const beast::error_code& ec) {
  return ec.category() == http::make_error_code(http::error::bad_target).category();
}

//------------------------------------------------------------------------------

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(std::shared_ptr<Core> core, tcp::socket socket, bool counted)
      : core_(std::move(core)),
        strand_(socket.get_executor()),
        stream_(std::move(socket)),
        idle_timer_(strand_),
        counted_(counted) {
    beast::error_code ec;
    tcp::endpoint peer = stream_.socket().remote_endpoint(ec);
    if (!ec) remote_address_ = peer.address().to_string() + ":" + std::to_string(peer.port());
    if (counted_) {
      std::lock_guard lock(core_->mu);
      ++core_->active;
    }
  }

  ~Session() {
    if (counted_) {
      std::lock_guard lock(core_->mu);
      --core_->active;
      core_->drained.notify_all();
    }
  }

  const net::any_io_executor& strand() const { return strand_; }

  void Start() {
    net::post(strand_, [self = shared_from_this()] { self->DoRead(); });
  }

  // Over the connection cap: answer 503 without reading the request, then close.
  void Reject() {
    net::post(strand_, [self = shared_from_this()] {
      self->RespondAndClose(503, Status::Unavailable("Too many connections; try again later."));
    });
  }

  // Server is stopping: read no more requests; close now if idle, else after the in-flight ones.
  void OnServerStop() {
    read_done_ = true;
    if (closed_) return;
    if (awaiting_first_byte_ && in_flight_.empty()) return CloseNow();
    MaybeClose();
  }

  void ForceClose() { CloseNow(); }

  // Any thread. Drops the response once Stop has given up on in-flight requests.
  void PostResponse(uint64_t seq, HttpResponse response) {
    std::lock_guard lock(core_->mu);
    if (!core_->accepting_posts) return;
    net::post(strand_, [self = shared_from_this(), seq, response = std::move(response)]() mutable {
      self->OnResponse(seq, std::move(response));
    });
  }

 private:
  struct InFlight {
    std::string method;
    std::string target;
    Clock::time_point start;
    bool keep_alive = false;
    std::optional<HttpResponse> response;  // set once the handler answered
  };

  // Completes one request exactly once; a handler that drops it without answering gets a 500 so
  // the connection's pipeline never stalls.
  struct Reply {
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

  void DoRead() {
    if (closed_ || read_done_ || reading_ || in_flight_.size() >= kPipelineLimit) return;
    if (buffer_.size() > 0) return ReadMessage();  // pipelined bytes already here
    // Wait for the first byte of the next request without a stream timeout: the idle timer
    // closes the connection only while no response is outstanding (long-polls may take minutes).
    reading_ = true;
    awaiting_first_byte_ = true;
    stream_.expires_never();
    MaybeArmIdleTimer();
    stream_.async_read_some(buffer_.prepare(kReadChunkBytes),
                            [self = shared_from_this()](beast::error_code ec, std::size_t n) {
                              self->OnFirstBytes(ec, n);
                            });
  }

  void OnFirstBytes(beast::error_code ec, std::size_t n) {
    reading_ = false;
    awaiting_first_byte_ = false;
    ++idle_generation_;
    idle_timer_.cancel();
    if (closed_) return;
    if (ec) return OnReadError(ec);
    buffer_.commit(n);
    if (read_done_) return MaybeClose();
    ReadMessage();
  }

  void ReadMessage() {
    parser_.emplace();
    parser_->body_limit(core_->options.body_limit_bytes);
    parser_->header_limit(static_cast<std::uint32_t>(core_->options.header_limit_bytes));
    reading_ = true;
    // Once a request has started, all of it must arrive within read_timeout (slow-loris). The
    // deadline is absolute: it also covers the body read started in OnHeader.
    stream_.expires_after(core_->options.read_timeout);
    http::async_read_header(
        stream_, buffer_, *parser_,
        [self = shared_from_this()](beast::error_code ec, std::size_t) { self->OnHeader(ec); });
  }

  void OnHeader(beast::error_code ec) {
    reading_ = false;
    if (closed_) return;
    if (ec) return OnReadError(ec);
    if (parser_->is_done()) return OnRead({});
    // curl sends `Expect: 100-continue` for bodies over 1 KiB and waits a second for it.
    bool wants_continue = beast::iequals(parser_->get()[http::field::expect], "100-continue");
    reading_ = true;
    http::async_read(
        stream_, buffer_, *parser_,
        [self = shared_from_this()](beast::error_code e, std::size_t) { self->OnRead(e); });
    // Only on an otherwise quiet connection: an interim response must not interleave with a
    // pipelined final one (the client then just sends its body after its own timeout).
    if (wants_continue && !writing_ && in_flight_.empty()) SendContinue();
  }

  void SendContinue() {
    static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
    writing_ = true;
    stream_.expires_after(core_->options.write_timeout);  // the read is pending: write timer only
    net::async_write(stream_, net::buffer(kContinue.data(), kContinue.size()),
                     [self = shared_from_this()](beast::error_code ec, std::size_t) {
                       self->writing_ = false;
                       if (self->closed_) return;
                       if (ec) return self->CloseNow();
                       self->DoWrite();
                       self->MaybeClose();
                     });
  }

  void OnRead(beast::error_code ec) {
    reading_ = false;
    if (closed_) return;
    if (ec) return OnReadError(ec);

    http::request<http::string_body> message = parser_->release();
    parser_.reset();
    HttpRequest request = MakeRequest(std::string(message.method_string()),
                                      std::string(message.target()), std::move(message.body()));
    for (const auto& field : message) {
      std::string name(field.name_string());
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      auto [it, inserted] = request.headers.emplace(name, std::string(field.value()));
      if (!inserted) it->second += ", " + std::string(field.value());
    }
    request.remote_address = remote_address_;

    uint64_t seq = next_seq_++;
    bool keep_alive = message.keep_alive();
    in_flight_[seq] = InFlight{request.method, request.target, Clock::now(), keep_alive, {}};
    if (!keep_alive) read_done_ = true;

    auto reply = std::make_shared<Reply>(shared_from_this(), seq);
    try {
      core_->handler(request, [reply](HttpResponse r) { reply->Complete(std::move(r)); });
    } catch (const std::exception& e) {
      spdlog::error("http: handler for {} {} threw: {}", request.method, request.target, e.what());
      reply->Complete(ErrorResponse(Status::Internal("Internal error.")));
    }
    reply.reset();
    DoRead();
  }

  void OnReadError(beast::error_code ec) {
    read_done_ = true;
    if (ec == http::error::end_of_stream || ec == http::error::partial_message) {
      return MaybeClose();  // the client closed (possibly mid-request): answer what is pending
    }
    if (ec == http::error::body_limit) {
      return RespondAndClose(413, Status::InvalidArgument(
                                      "Request body exceeds " +
                                      std::to_string(core_->options.body_limit_bytes) + " bytes."));
    }
    if (ec == http::error::header_limit) {
      return RespondAndClose(
          431,
          Status::InvalidArgument("Request headers exceed " +
                                  std::to_string(core_->options.header_limit_bytes) + " bytes."));
    }
    if (IsHttpError(ec)) {
      return RespondAndClose(400,
                             Status::InvalidArgument("Malformed HTTP request: " + ec.message()));
    }
    // Timeout (slow or silent client), reset, or cancellation: nobody left to answer.
    if (ec != net::error::operation_aborted) spdlog::debug("http: read: {}", ec.message());
    CloseNow();
  }

  // Queues an error response behind the outstanding ones; the connection closes after it.
  void RespondAndClose(int http_status, const Status& status) {
    read_done_ = true;
    uint64_t seq = next_seq_++;
    in_flight_[seq] = InFlight{"", "", Clock::now(), false, {}};
    OnResponse(seq, ErrorResponse(http_status, status));
  }

  void OnResponse(uint64_t seq, HttpResponse response) {
    if (closed_) return;
    auto it = in_flight_.find(seq);
    if (it == in_flight_.end() || it->second.response) return;
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
    DoWrite();
  }

  void DoWrite() {
    if (writing_ || closed_) return;
    auto it = in_flight_.find(write_seq_);
    if (it == in_flight_.end() || !it->second.response) return;
    HttpResponse& response = *it->second.response;
    // While stopping, the last outstanding response tells the client to go away.
    bool keep_alive = it->second.keep_alive && !(core_->stopping && in_flight_.size() == 1);

    auto message = std::make_shared<http::response<http::string_body>>();
    message->version(11);
    message->result(static_cast<unsigned>(response.status));
    if (response.status == 499) message->reason("Client Closed Request");
    message->set(http::field::server, "tpuemud");
    message->set(http::field::content_type, response.content_type);
    for (const auto& [name, value] : response.headers) message->insert(name, value);
    message->body() = std::move(response.body);
    message->keep_alive(keep_alive);
    message->prepare_payload();

    writing_ = true;
    stream_.expires_after(core_->options.write_timeout);
    http::async_write(stream_, *message,
                      [self = shared_from_this(), message, keep_alive](
                          beast::error_code ec, std::size_t) { self->OnWrite(ec, keep_alive); });
  }

  void OnWrite(beast::error_code ec, bool keep_alive) {
    writing_ = false;
    if (closed_) return;
    if (ec) {
      spdlog::debug("http: write: {}", ec.message());
      return CloseNow();
    }
    in_flight_.erase(write_seq_++);
    if (!keep_alive) {
      read_done_ = true;
      return GracefulClose();
    }
    DoWrite();
    DoRead();
    MaybeArmIdleTimer();
    MaybeClose();
  }

  void MaybeArmIdleTimer() {
    if (closed_ || !awaiting_first_byte_ || !in_flight_.empty()) return;
    uint64_t generation = ++idle_generation_;
    idle_timer_.expires_after(core_->options.idle_timeout);
    idle_timer_.async_wait([self = shared_from_this(), generation](beast::error_code ec) {
      if (ec || generation != self->idle_generation_ || !self->awaiting_first_byte_ ||
          !self->in_flight_.empty()) {
        return;
      }
      self->CloseNow();
    });
  }

  // Closes once nothing is left to read or answer.
  void MaybeClose() {
    if (closed_ || !read_done_ || !in_flight_.empty() || writing_) return;
    if (reading_ && !awaiting_first_byte_) return;  // a started request may still complete
    GracefulClose();
  }

  void GracefulClose() {
    if (closed_) return;
    // A pending read means the kernel holds no unread bytes: a plain close sends no RST.
    if (reading_) return CloseNow();
    closed_ = true;
    ++idle_generation_;
    idle_timer_.cancel();
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
    stream_.expires_after(kLingerTime);
    Linger();
  }

  void Linger() {
    stream_.async_read_some(net::buffer(linger_buffer_),
                            [self = shared_from_this()](beast::error_code ec, std::size_t) {
                              if (ec) return self->stream_.close();
                              self->Linger();
                            });
  }

  void CloseNow() {
    closed_ = true;
    ++idle_generation_;
    idle_timer_.cancel();
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
    stream_.close();
  }

  std::shared_ptr<Core> core_;  // first member: destroyed last, after the socket and timer
  const net::any_io_executor strand_;
  beast::tcp_stream stream_;
  net::steady_timer idle_timer_;
  const bool counted_;
  std::string remote_address_;

  // Everything below is touched only on strand_.
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::map<uint64_t, InFlight> in_flight_;  // requests read, responses not yet written
  uint64_t next_seq_ = 0;                   // sequence number of the next request read
  uint64_t write_seq_ = 0;                  // sequence number of the next response to write
  uint64_t idle_generation_ = 0;            // invalidates stale idle-timer waits
  bool reading_ = false;                    // a read is pending
  bool awaiting_first_byte_ = false;        // ... and it waits for a new request to start
  bool writing_ = false;
  bool read_done_ = false;  // no more requests will be read (EOF, error, Connection: close, Stop)
  bool closed_ = false;
  std::array<char, 4096> linger_buffer_{};
};

}  // namespace

//------------------------------------------------------------------------------

struct HttpServer::Impl {
  explicit Impl(std::shared_ptr<Core> c) : core(std::move(c)) {}

  void DoAccept() {
    acceptor->async_accept(
        net::make_strand(core->NextIoContext()),
        [this](beast::error_code ec, tcp::socket socket) { OnAccept(ec, std::move(socket)); });
  }

  void OnAccept(beast::error_code ec, tcp::socket socket) {
    if (ec == net::error::operation_aborted || core->stopping) return;
    if (ec) {
      // EMFILE and friends: back off instead of spinning on the failing accept.
      spdlog::warn("http: accept: {}", ec.message());
      retry_timer->expires_after(std::chrono::milliseconds(50));
      retry_timer->async_wait([this](beast::error_code wait_ec) {
        if (!wait_ec && !core->stopping) DoAccept();
      });
      return;
    }
    bool over_cap;
    {
      std::lock_guard lock(core->mu);
      over_cap = core->active >= core->options.max_connections;
    }
    auto session = std::make_shared<Session>(core, std::move(socket), !over_cap);
    {
      std::lock_guard lock(sessions_mu);
      if (core->stopping) return;  // Stop's snapshot may have missed it: drop it here
      if (sessions.size() > 64 &&
          sessions.size() > 2 * static_cast<std::size_t>(std::max(1, ActiveUnlocked()))) {
        std::erase_if(sessions, [](const std::weak_ptr<Session>& s) { return s.expired(); });
      }
      sessions.push_back(session);
    }
    if (over_cap) {
      session->Reject();
    } else {
      session->Start();
    }
    DoAccept();
  }

  int ActiveUnlocked() {
    std::lock_guard lock(core->mu);
    return core->active;
  }

  std::vector<std::shared_ptr<Session>> Snapshot() {
    std::lock_guard lock(sessions_mu);
    std::vector<std::shared_ptr<Session>> out;
    for (const auto& weak : sessions) {
      if (auto session = weak.lock()) out.push_back(std::move(session));
    }
    return out;
  }

  std::shared_ptr<Core> core;  // first member: outlives the acceptor and timer below
  std::optional<tcp::acceptor> acceptor;
  std::optional<net::steady_timer> retry_timer;
  std::vector<net::executor_work_guard<net::io_context::executor_type>> work;  // one per ioc
  std::vector<std::thread> threads;
  uint16_t port = 0;

  std::mutex sessions_mu;
  std::vector<std::weak_ptr<Session>> sessions;  // guarded by sessions_mu

  std::mutex lifecycle_mu;  // serializes Start and Stop
  bool started = false;     // guarded by lifecycle_mu
  bool stopped = false;     // guarded by lifecycle_mu
};

HttpServer::HttpServer(HttpServerOptions options, AsyncHandlerFn handler,
                       std::function<void(const AccessLogEntry&)> on_access)
    : impl_(std::make_unique<Impl>(
          std::make_shared<Core>(std::move(options), std::move(handler), std::move(on_access)))) {}

HttpServer::~HttpServer() { Stop(); }

Status HttpServer::Start() {
  std::lock_guard lifecycle(impl_->lifecycle_mu);
  if (impl_->started || impl_->stopped) {
    return Status::FailedPrecondition("HttpServer::Start called twice");
  }
  const HttpServerOptions& options = impl_->core->options;
  std::string where = options.host + ":" + std::to_string(options.port);
  auto failed = [&](std::string_view step, const beast::error_code& ec) {
    impl_->acceptor.reset();
    return Status::Unavailable("Cannot listen on " + where + ": " + std::string(step) + ": " +
                               ec.message());
  };

  beast::error_code ec;
  tcp::resolver resolver(*impl_->core->iocs.front());
  auto endpoints = resolver.resolve(options.host, std::to_string(options.port),
                                    tcp::resolver::passive | tcp::resolver::numeric_service, ec);
  if (ec || endpoints.empty()) return failed("resolve", ec);
  tcp::endpoint endpoint = endpoints.begin()->endpoint();

  impl_->acceptor.emplace(net::make_strand(*impl_->core->iocs.front()));
  impl_->acceptor->open(endpoint.protocol(), ec);
  if (ec) return failed("open", ec);
  impl_->acceptor->set_option(net::socket_base::reuse_address(true), ec);
  if (ec) return failed("set_option", ec);
  impl_->acceptor->bind(endpoint, ec);
  if (ec) return failed("bind", ec);
  impl_->acceptor->listen(net::socket_base::max_listen_connections, ec);
  if (ec) return failed("listen", ec);
  impl_->port = impl_->acceptor->local_endpoint(ec).port();
  impl_->retry_timer.emplace(impl_->acceptor->get_executor());

  for (auto& ioc : impl_->core->iocs) impl_->work.emplace_back(ioc->get_executor());
  impl_->DoAccept();
  for (auto& ioc : impl_->core->iocs) {
    impl_->threads.emplace_back([ioc = ioc.get()] {
      while (true) {
        try {
          ioc->run();
          return;
        } catch (const std::exception& e) {
          spdlog::error("http: io thread caught: {}", e.what());
        }
      }
    });
  }
  impl_->started = true;
  spdlog::info("http: listening on {}:{}", options.host, impl_->port);
  return Status::Ok();
}

uint16_t HttpServer::port() const { return impl_->port; }

int HttpServer::active_connections() const { return impl_->ActiveUnlocked(); }

void HttpServer::Stop(std::chrono::milliseconds drain) {
  std::lock_guard lifecycle(impl_->lifecycle_mu);
  if (impl_->stopped) return;
  impl_->stopped = true;
  if (!impl_->started) return;
  Core& core = *impl_->core;
  auto deadline = Clock::now() + drain;

  {
    std::lock_guard lock(impl_->sessions_mu);
    core.stopping = true;
  }
  net::post(impl_->acceptor->get_executor(), [impl = impl_.get()] {
    beast::error_code ec;
    impl->acceptor->close(ec);
    impl->retry_timer->cancel();
  });
  for (auto& session : impl_->Snapshot()) {
    net::post(session->strand(), [session] { session->OnServerStop(); });
  }
  {
    // The snapshot above is gone, so sessions can finish and drop `active` to zero.
    std::unique_lock lock(core.mu);
    core.drained.wait_until(lock, deadline, [&] { return core.active == 0; });
    core.accepting_posts = false;
  }
  for (auto& session : impl_->Snapshot()) {
    net::post(session->strand(), [session] { session->ForceClose(); });
  }
  // With every socket closed and no new posts accepted, run() returns once the queue empties.
  for (auto& guard : impl_->work) guard.reset();
  for (std::thread& thread : impl_->threads) thread.join();
  impl_->threads.clear();
  spdlog::info("http: stopped");
}

}  // namespace tpuemu::api
