// The terminal's WebSocket (terminal_session.h), shaped after Beast's websocket server examples:
// the session owns its stream, keeps itself alive with shared_from_this, and runs on the
// connection's strand, which its pty descriptor shares; DoX/OnX pairs, one Fail path.
#include "api/terminal_session.h"

#include <unistd.h>

#include <array>
#include <deque>
#include <optional>
#include <thread>
#include <utility>

#include <spdlog/spdlog.h>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/bind_handler.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/websocket/stream.hpp>
#include <nlohmann/json.hpp>

#include "api/connection_takeover.h"

namespace tpuemu::api {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
namespace websocket = beast::websocket;
using tcp = net::ip::tcp;

constexpr const char* kSubprotocol = "tpuemu.terminal.v1";
constexpr std::size_t kMessageMax = 64 * 1024;
constexpr std::size_t kInputQueueMax = 1 << 20;  // keystrokes not yet taken by the terminal

// Whether the client offered `protocol` in Sec-WebSocket-Protocol.
bool Offered(const HttpRequest& request, std::string_view protocol) {
  std::optional<std::string> offered = request.Header("sec-websocket-protocol");
  if (!offered) return false;
  for (std::string_view item : HeaderItems(*offered)) {
    if (item == protocol) return true;
  }
  return false;
}

class TerminalSession : public ConnectionTakeover,
                        public std::enable_shared_from_this<TerminalSession> {
 public:
  TerminalSession(HttpRequest request, std::unique_ptr<service::ConsoleTerminal> terminal,
                  std::shared_ptr<void> place)
      : request_(std::move(request)), terminal_(std::move(terminal)), place_(std::move(place)) {}
  ~TerminalSession() override { EndLogin(/*exited=*/false); }

  void Start(tcp::socket socket, beast::flat_buffer read_ahead) override {
    ws_.emplace(std::move(socket));
    if (read_ahead.size() > 0) return Fail({}, "data before the handshake");
    beast::get_lowest_layer(*ws_).expires_never();
    websocket::stream_base::timeout timeout{};
    timeout.handshake_timeout = std::chrono::seconds(10);
    timeout.idle_timeout = std::chrono::seconds(60);
    timeout.keep_alive_pings = true;
    ws_->set_option(timeout);
    const bool offered = Offered(request_, kSubprotocol);
    ws_->set_option(websocket::stream_base::decorator([offered](websocket::response_type& res) {
      if (offered) res.set(http::field::sec_websocket_protocol, kSubprotocol);
    }));
    ws_->read_message_max(kMessageMax);
    pty_.emplace(ws_->get_executor(), dup(terminal_->fd()));
    http::request<http::empty_body> upgrade{http::verb::get, request_.target, 11};
    for (const auto& [name, value] : request_.headers) upgrade.set(name, value);
    ws_->async_accept(upgrade,
                      beast::bind_front_handler(&TerminalSession::OnAccept, shared_from_this()));
  }

 private:
  void OnAccept(beast::error_code ec) {
    if (ec) return Fail(ec, "accept");
    ws_->binary(true);
    DoReadSocket();
    DoReadPty();
  }

  // The browser's side: keystrokes (binary) and resizes (text).
  void DoReadSocket() {
    ws_->async_read(in_,
                    beast::bind_front_handler(&TerminalSession::OnReadSocket, shared_from_this()));
  }
  void OnReadSocket(beast::error_code ec, std::size_t) {
    if (ec) return Fail(ec, "read");  // closed, the tab gone, or no pong in time
    std::string data = beast::buffers_to_string(in_.data());
    in_.consume(in_.size());
    if (ws_->got_text()) {
      const nlohmann::json msg = nlohmann::json::parse(data, nullptr, false);
      const nlohmann::json size =
          msg.is_object() ? msg.value("resize", nlohmann::json()) : nlohmann::json();
      if (size.is_object() && size.value("cols", 0) > 0 && size.value("rows", 0) > 0) {
        Status s = terminal_->Resize(size.value("cols", 0), size.value("rows", 0));
        if (!s.ok()) spdlog::debug("terminal: {}", s.message());
      }
    } else if (!data.empty()) {
      queued_bytes_ += data.size();
      if (queued_bytes_ > kInputQueueMax) return Fail({}, "input queue over 1 MiB");
      to_pty_.push_back(std::move(data));
      DoWritePty();
    }
    DoReadSocket();
  }

  void DoWritePty() {
    if (writing_pty_ || to_pty_.empty() || ended_) return;
    writing_pty_ = true;
    net::async_write(*pty_, net::buffer(to_pty_.front()),
                     beast::bind_front_handler(&TerminalSession::OnWritePty, shared_from_this()));
  }
  void OnWritePty(beast::error_code ec, std::size_t) {
    writing_pty_ = false;
    if (ec) return;  // the login is ending: OnReadPty says so
    queued_bytes_ -= to_pty_.front().size();
    to_pty_.pop_front();
    DoWritePty();
  }

  // The login's side: its output, one WebSocket message at a time.
  void DoReadPty() {
    pty_->async_read_some(net::buffer(out_), beast::bind_front_handler(&TerminalSession::OnReadPty,
                                                                       shared_from_this()));
  }
  void OnReadPty(beast::error_code ec, std::size_t bytes) {
    if (ended_) return;
    if (ec) return LoginEnded();  // EIO: every holder of the terminal's other side is gone
    ws_->async_write(
        net::buffer(out_.data(), bytes),
        beast::bind_front_handler(&TerminalSession::OnWriteSocket, shared_from_this()));
  }
  void OnWriteSocket(beast::error_code ec, std::size_t) {
    if (ec) return Fail(ec, "write");
    DoReadPty();
  }

  void LoginEnded() {
    const int status = EndLogin(/*exited=*/true);
    ws_->async_close(websocket::close_reason(websocket::close_code::normal,
                                             "session ended (exit " + std::to_string(status) + ")"),
                     [self = shared_from_this()](beast::error_code) {});
  }

  // The one failure path: the connection is over; the login is hung up.
  void Fail(beast::error_code ec, std::string_view what) {
    if (ec && ec != websocket::error::closed && ec != net::error::operation_aborted) {
      spdlog::debug("terminal {}: {}: {}", request_.path, what, ec.message());
    }
    EndLogin(/*exited=*/false);
    beast::error_code ignored;
    beast::get_lowest_layer(*ws_).socket().close(ignored);
  }

  // Hangs the login up (once); its exit status. A login that has `exited` is reaped here; one
  // still running is hung up on a thread of its own, so that the strand never waits for ssh
  // (ConsoleTerminal::End waits up to a second before SIGKILL).
  int EndLogin(bool exited) {
    if (ended_) return exit_status_;
    ended_ = true;
    if (pty_) {
      beast::error_code ignored;
      pty_->close(ignored);
    }
    if (terminal_ && exited) {
      exit_status_ = terminal_->End();
    } else if (terminal_) {
      std::thread([terminal = std::move(terminal_), place = std::move(place_)] {
        terminal->End();
      }).detach();
    }
    place_.reset();
    return exit_status_;
  }

  HttpRequest request_;
  std::unique_ptr<service::ConsoleTerminal> terminal_;
  std::shared_ptr<void> place_;  // the budget's place, given back when the login ends
  std::optional<websocket::stream<beast::tcp_stream>> ws_;
  std::optional<net::posix::stream_descriptor> pty_;
  beast::flat_buffer in_;
  std::array<char, 16 * 1024> out_{};
  std::deque<std::string> to_pty_;
  std::size_t queued_bytes_ = 0;
  bool writing_pty_ = false;
  bool ended_ = false;
  int exit_status_ = -1;
};

}  // namespace

std::shared_ptr<void> TerminalBudget::Take(const std::string& worker, std::string* why) {
  std::lock_guard lock(counts_->mu);
  if (counts_->total >= max_total_) {
    *why = "tpuemud has " + std::to_string(max_total_) + " terminals open, its most";
    return nullptr;
  }
  auto found = counts_->per_worker.find(worker);
  if (found != counts_->per_worker.end() && found->second >= max_per_worker_) {
    *why = "this worker has " + std::to_string(max_per_worker_) + " terminals open, its most";
    return nullptr;
  }
  if (max_per_worker_ <= 0) {
    *why = "terminals are off (--max-terminals-per-worker 0)";
    return nullptr;
  }
  ++counts_->total;
  ++counts_->per_worker[worker];
  return std::shared_ptr<void>(new char(0), [counts = counts_, worker](void* held) {
    delete static_cast<char*>(held);
    std::lock_guard lock(counts->mu);
    --counts->total;
    if (--counts->per_worker[worker] == 0) counts->per_worker.erase(worker);
  });
}

HttpResponse TerminalUpgrade(const HttpRequest& request,
                             std::unique_ptr<service::ConsoleTerminal> terminal,
                             std::shared_ptr<void> place) {
  HttpResponse response;
  response.status = 101;
  response.takeover =
      std::make_shared<TerminalSession>(request, std::move(terminal), std::move(place));
  return response;
}

}  // namespace tpuemu::api
