// The dashboard's terminal into a worker (api/terminal_session.h), through its public surface: a
// WebSocket to a real tpuemud with worker sandboxes, spoken as the browser does (the
// "tpuemu.terminal.v1" subprotocol, keystrokes as binary frames, resizes as JSON text frames).
// The browser test (tests/browser) drives the same socket from xterm.js in Chromium.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <optional>
#include <string>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/websocket/stream.hpp>
#include <nlohmann/json.hpp>

#include "tests/e2e/workers_fixture.h"

namespace tpuemu::testing {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
namespace websocket = beast::websocket;
using std::chrono::seconds;

// One terminal, as the browser holds it. Reads run with a deadline (the socket's timeout).
class TerminalClient {
 public:
  // Opens `target` on 127.0.0.1:port; `protocols` is Sec-WebSocket-Protocol's value. On a refused
  // handshake, ok() is false and status() is the HTTP status tpuemud answered.
  TerminalClient(uint16_t port, const std::string& target, const std::string& protocols)
      : ws_(ioc_) {
    beast::get_lowest_layer(ws_).connect({net::ip::make_address("127.0.0.1"), port});
    ws_.set_option(websocket::stream_base::decorator([protocols](websocket::request_type& req) {
      if (!protocols.empty()) req.set(http::field::sec_websocket_protocol, protocols);
    }));
    beast::error_code ec;
    ws_.handshake(response_, "127.0.0.1", target, ec);
    ok_ = !ec;
    if (ok_) ws_.binary(true);
  }
  bool ok() const { return ok_; }
  int status() const { return static_cast<int>(response_.result_int()); }
  std::string body() const { return response_.body(); }
  std::string protocol() const {
    return std::string(response_[http::field::sec_websocket_protocol]);
  }

  // Sends keystrokes (a broken connection shows in the next WaitFor).
  void Type(const std::string& keys) {
    beast::error_code ec;
    ws_.binary(true);
    ws_.write(net::buffer(keys), ec);
  }
  void Resize(int cols, int rows) {
    beast::error_code ec;
    ws_.text(true);
    ws_.write(net::buffer(nlohmann::json{{"resize", {{"cols", cols}, {"rows", rows}}}}.dump()), ec);
    ws_.binary(true);
  }
  // Reads output until it holds `text` (after what earlier waits consumed) or `timeout` passes.
  bool WaitFor(const std::string& text, seconds timeout = seconds(20)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (seen_.find(text, consumed_) == std::string::npos) {
      if (closed_ || !ReadOne(deadline)) return false;
    }
    consumed_ = seen_.find(text, consumed_) + text.size();
    return true;
  }
  // Reads until the server closes; its close reason (nullopt when the connection just broke or
  // nothing came in time).
  std::optional<websocket::close_reason> WaitClosed(seconds timeout = seconds(20)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!closed_) {
      if (!ReadOne(deadline)) break;
    }
    if (close_error_ == websocket::error::closed) return ws_.reason();
    return std::nullopt;
  }
  void Close() {
    beast::error_code ec;
    ws_.close(websocket::close_code::going_away, ec);
  }
  const std::string& seen() const { return seen_; }

 private:
  // One message, read before `deadline` (a sync read of Beast has no timeout: an async read run
  // for the time left). False when the deadline passed or the connection ended.
  bool ReadOne(std::chrono::steady_clock::time_point deadline) {
    beast::flat_buffer buffer;
    bool done = false;
    beast::error_code ec;
    ws_.async_read(buffer, [&](beast::error_code e, std::size_t) {
      ec = e;
      done = true;
    });
    ioc_.restart();
    ioc_.run_until(deadline);
    if (!done) {
      beast::get_lowest_layer(ws_).cancel();
      ioc_.restart();
      ioc_.run();
      return false;
    }
    if (ec) {
      closed_ = true;
      close_error_ = ec;
      return false;
    }
    seen_ += beast::buffers_to_string(buffer.data());
    return true;
  }

  net::io_context ioc_;
  websocket::stream<beast::tcp_stream> ws_;
  websocket::response_type response_;
  bool ok_ = false;
  bool closed_ = false;
  beast::error_code close_error_;
  std::string seen_;
  std::size_t consumed_ = 0;
};

std::string Base64Url(const std::string& bytes) {
  static const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  uint32_t bits = 0;
  int count = 0;
  for (unsigned char c : bytes) {
    bits = (bits << 8) | c;
    count += 8;
    while (count >= 6) {
      count -= 6;
      out.push_back(kAlphabet[(bits >> count) & 63]);
    }
  }
  if (count > 0) out.push_back(kAlphabet[(bits << (6 - count)) & 63]);
  return out;
}

class TerminalTest : public WorkersTest {
 protected:
  std::string Target(const std::string& node, int worker, const std::string& query = "") {
    return Base() + "/nodes/" + node + "/workers/" + std::to_string(worker) + "/terminal" + query;
  }
};

TEST_F(TerminalTest, LogsInWithSudoResizesInterruptsAndEndsOnExit) {
  const nlohmann::json node = CreateReady("term", {{"acceleratorType", "v4-8"}});
  if (HasFailure()) return;
  TerminalClient t(daemon_.port(), Target("term", 0, "?cols=100&rows=30"), "tpuemu.terminal.v1");
  ASSERT_TRUE(t.ok()) << t.status() << " " << t.body();
  EXPECT_EQ(t.protocol(), "tpuemu.terminal.v1");
  // Without auth, the login is tpuemud's default console user, with passwordless sudo.
  t.Type("echo marker-$(whoami)-$(hostname)\n");
  ASSERT_TRUE(t.WaitFor("marker-tpuemu-t1v-n-")) << t.seen();
  t.Type("sudo -n id -u; echo sudo-done\n");
  ASSERT_TRUE(t.WaitFor("0\r\nsudo-done")) << t.seen();
  t.Type("stty size\n");
  EXPECT_TRUE(t.WaitFor("30 100")) << t.seen();
  t.Resize(120, 40);
  t.Type("stty size\n");
  EXPECT_TRUE(t.WaitFor("40 120")) << t.seen();
  // UTF-8 both ways: typed, echoed by the shell, printed by the command.
  t.Type("echo \"h\xc3\xa9llo \xe2\x9c\x93\" | od -An -tx1 | tr -d ' \\n'; echo\n");
  EXPECT_TRUE(t.WaitFor("68c3a96c6c6f20e29c930a")) << t.seen();
  // Ctrl-C reaches the foreground command as SIGINT, and the shell's next prompt (readline
  // turns bracketed paste on again) comes back. The command says when it runs: a ^C sent before
  // the shell handed it the terminal would reach the shell instead.
  t.Type("sh -c 'echo sleeping; exec sleep 100'\n");
  ASSERT_TRUE(t.WaitFor("sleeping\r\n")) << t.seen();
  t.Type("\x03");
  EXPECT_TRUE(t.WaitFor("\x1b[?2004h", seconds(10))) << t.seen();
  t.Type("echo after-$((40+2))\n");
  EXPECT_TRUE(t.WaitFor("after-42", seconds(10))) << t.seen();
  t.Type("exit\n");
  std::optional<websocket::close_reason> reason = t.WaitClosed();
  ASSERT_TRUE(reason.has_value()) << t.seen();
  EXPECT_EQ(reason->code, websocket::close_code::normal);
  EXPECT_EQ(std::string(reason->reason.c_str()), "session ended (exit 0)");
}

TEST_F(TerminalTest, ClosingTheTabEndsTheLogin) {
  const nlohmann::json node = CreateReady("tab", {{"acceleratorType", "v4-8"}});
  if (HasFailure()) return;
  {
    TerminalClient t(daemon_.port(), Target("tab", 0), "tpuemu.terminal.v1");
    ASSERT_TRUE(t.ok()) << t.status() << " " << t.body();
    t.Type("sleep 1234 & echo started\n");
    ASSERT_TRUE(t.WaitFor("started")) << t.seen();
    t.Close();
  }
  // The login's shell and its children get SIGHUP: nothing of the console user is left.
  EXPECT_TRUE(WaitFor(
      [&] {
        const nlohmann::json workers = Get(Base() + "/nodes/tab/workers");
        return workers.is_object() && workers["workers"][0].value("processes", 99) <= 3;
      },
      seconds(20)))
      << Get(Base() + "/nodes/tab/workers").dump();
}

class TerminalBoundsTest : public TerminalTest {
 protected:
  TerminalBoundsTest() { extra_daemon_args_ = {"--max-terminals-per-worker", "2"}; }
};

TEST_F(TerminalBoundsTest, RefusesWhatIsNotATerminalAndBoundsHowManyOpen) {
  const nlohmann::json node = CreateReady("bounds", {{"acceleratorType", "v4-8"}});
  if (HasFailure()) return;
  Result<ClientResponse> plain = client_->Request("GET", Target("bounds", 0));
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->status, 400);
  EXPECT_NE(plain->body.find("WebSocket endpoint"), std::string::npos) << plain->body;
  TerminalClient missing(daemon_.port(), Target("bounds", 7), "tpuemu.terminal.v1");
  EXPECT_FALSE(missing.ok());
  EXPECT_EQ(missing.status(), 404);
  TerminalClient size(daemon_.port(), Target("bounds", 0, "?cols=0"), "tpuemu.terminal.v1");
  EXPECT_FALSE(size.ok());
  EXPECT_EQ(size.status(), 400);
  // --max-terminals-per-worker 2 (set below): the third is 429 while two are open.
  TerminalClient a(daemon_.port(), Target("bounds", 0), "tpuemu.terminal.v1");
  TerminalClient b(daemon_.port(), Target("bounds", 0), "tpuemu.terminal.v1");
  ASSERT_TRUE(a.ok() && b.ok());
  TerminalClient c(daemon_.port(), Target("bounds", 0), "tpuemu.terminal.v1");
  EXPECT_FALSE(c.ok());
  EXPECT_EQ(c.status(), 429);
  EXPECT_NE(c.body().find("RESOURCE_EXHAUSTED"), std::string::npos) << c.body();
  a.Close();
  EXPECT_TRUE(WaitFor(
      [&] {
        TerminalClient d(daemon_.port(), Target("bounds", 0), "tpuemu.terminal.v1");
        return d.ok();
      },
      seconds(10)));
}

class TerminalAuthTest : public TerminalTest {
 protected:
  TerminalAuthTest() {
    const std::string file = "/tmp/tpuemu-terminal-tokens-" + std::to_string(getpid()) + ".json";
    std::ofstream(file) << R"({"tokens": [
        {"token": "ed/it+or=", "projects": ["proj"], "role": "editor", "user": "Alice.Smith@example.com"},
        {"token": "view", "projects": ["proj"], "role": "viewer"},
        {"token": "other", "projects": ["elsewhere"], "role": "editor"}]})";
    extra_daemon_args_ = {"--auth-tokens", file};
  }
  // A READY node made with the editor's token.
  void CreateReadyWithToken(const std::string& id) {
    const std::map<std::string, std::string> auth = {{"Authorization", "Bearer ed/it+or="}};
    nlohmann::json body = {{"acceleratorType", "v4-8"}, {"runtimeVersion", "tpu-ubuntu2204-base"}};
    Result<ClientResponse> created =
        client_->Request("POST", Base() + "/nodes?nodeId=" + id, body.dump(), auth);
    ASSERT_TRUE(created.ok() && created->status == 200) << (created.ok() ? created->body : "");
    std::string state;
    ASSERT_TRUE(WaitFor(
        [&] {
          Result<ClientResponse> got = client_->Request("GET", Base() + "/nodes/" + id, "", auth);
          state = got.ok() ? got->Json().value("state", "") : "";
          return state == "READY";
        },
        seconds(60)))
        << state;
  }
};

TEST_F(TerminalAuthTest, NeedsTheTokenAndProjectAndLogsInTheTokensUser) {
  CreateReadyWithToken("auth");
  if (HasFailure()) return;
  TerminalClient none(daemon_.port(), Target("auth", 0), "tpuemu.terminal.v1");
  EXPECT_FALSE(none.ok());
  EXPECT_EQ(none.status(), 401);
  TerminalClient viewer(daemon_.port(), Target("auth", 0),
                        "tpuemu.terminal.v1, bearer." + Base64Url("view"));
  EXPECT_FALSE(viewer.ok());
  EXPECT_EQ(viewer.status(), 403);
  TerminalClient other(daemon_.port(), Target("auth", 0),
                       "tpuemu.terminal.v1, bearer." + Base64Url("other"));
  EXPECT_FALSE(other.ok());
  EXPECT_EQ(other.status(), 403);
  TerminalClient alice(daemon_.port(), Target("auth", 0),
                       "tpuemu.terminal.v1, bearer." + Base64Url("ed/it+or="));
  ASSERT_TRUE(alice.ok()) << alice.status() << " " << alice.body();
  alice.Type("echo who-$(whoami)-$(sudo -n id -u)\n");
  EXPECT_TRUE(alice.WaitFor("who-alice.smith-0")) << alice.seen();
}

}  // namespace
}  // namespace tpuemu::testing
