// Fuzzes HTTP request handling: raw bytes -> Boost.Beast's request parser with tpuemud's default
// limits (body 1 MiB, header 16 KiB) -> the HttpRequest the server builds -> daemon::App::Handle,
// the very handler tpuemud serves (auth layer, every route: emulator, nodes, operations, catalog,
// jobs, observability, hardware, static files) over an in-memory store. One input may hold up to
// kMaxRequests pipelined requests (so a create can be followed by a get, a job submit, ...);
// the whole App is built fresh per input so that inputs do not depend on each other.
//
// Auth is on: a request without an Authorization header is sent with the admin token ("*",
// editor) so the routes behind auth stay reachable; a request that carries its own header is
// checked as sent, which exercises the 401/403 paths. "Bearer fuzz-viewer" is a known viewer.
//
// Oracle besides "no crash, leak, UB": the handler never answers 500 — bad input is a 4xx in
// Google's envelope (DESIGN.md). Jobs run for real but under small limits (tensors of at most
// 4096 elements, 4 steps, HLO modules of 256 instructions) so an input cannot ask for minutes of
// engine work (an HLO while loop that would is stopped when the App shuts down); event long-polls
// are capped by their `timeout` parameter, which the fuzzer clamps to 0.
//
// The Beast message -> HttpRequest conversion is the server's own (api/http_message.h).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include <spdlog/spdlog.h>
#include <boost/asio/buffer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "api/auth.h"
#include "api/http_message.h"
#include "api/http_server.h"
#include "daemon/app.h"

namespace {

using namespace tpuemu;  // NOLINT: a fuzz target's one job
namespace beast = boost::beast;
namespace http = beast::http;

constexpr int kMaxRequests = 8;

constexpr const char* kTokens = R"({"tokens": [
  {"token": "fuzz-admin", "projects": ["*"], "role": "editor"},
  {"token": "fuzz-viewer", "projects": ["p"], "role": "viewer"}]})";

std::unique_ptr<daemon::App> StartApp() {
  daemon::AppOptions options;
  options.nodes = {.provisioning_delay_ms = 0, .transition_delay_ms = 0};
  options.jobs = {.max_steps = 4,
                  .max_timeout_seconds = 60,
                  .max_tensor_elements = 4096,
                  .max_hlo_text_bytes = 64 << 10,
                  .max_hlo_instructions = 256};
  options.observability = {.utilization_interval_ms = 0};
  options.serve_http = false;
  options.writer_threads = 2;
  options.engine_threads = 1;
  options.auth = api::AuthPolicy::Parse(kTokens).value();
  options.web_dir = "web";  // relative to the working directory; a missing folder 404s
  options.log_requests = false;
  Result<std::unique_ptr<daemon::App>> app = daemon::App::Start(std::move(options));
  if (!app.ok()) {
    std::fprintf(stderr, "http_fuzzer: %s\n", app.status().ToString().c_str());
    std::abort();
  }
  return std::move(app).value();
}

// Parses one request from the front of `input`; returns false when no whole request is there.
bool NextRequest(beast::string_view& input, api::HttpRequest* out) {
  const api::HttpServerOptions limits;  // tpuemud's defaults
  api::BeastRequestParser parser;
  parser.body_limit(limits.body_limit_bytes);
  parser.eager(true);
  std::size_t header_bytes = 0;
  beast::error_code ec;
  while (!parser.is_done()) {
    if (input.empty()) {
      // The client closed: only a body that runs to EOF can complete now.
      if (!parser.got_some()) return false;
      parser.put_eof(ec);
      if (ec || !parser.is_done()) return false;
      break;
    }
    boost::asio::const_buffer bytes(input.data(), input.size());
    // The header as the server reads it: all of its bytes count against the header limit.
    std::size_t used =
        parser.is_header_done()
            ? parser.put(bytes, ec)
            : api::PutHeader(parser, bytes, limits.header_limit_bytes, &header_bytes, ec);
    input.remove_prefix(used);
    if (ec == http::error::need_more) {
      if (used == 0) return false;  // an incomplete header: no more bytes will come
      ec = {};
      continue;
    }
    if (ec) return false;  // the server answers 400/413/431 and closes: nothing is routed
  }
  *out = api::ToHttpRequest(parser.release(), "127.0.0.1:1");
  if (!out->Header("authorization")) out->headers["authorization"] = "Bearer fuzz-admin";
  // A long-poll (events, :wait) must not hold an input for up to a minute.
  for (auto& [key, value] : out->query) {
    if (key == "timeout") value = "0s";
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  spdlog::set_level(spdlog::level::off);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  beast::string_view input(reinterpret_cast<const char*>(data), size);
  api::HttpRequest request;
  if (!NextRequest(input, &request)) return 0;
  std::unique_ptr<daemon::App> app = StartApp();
  for (int i = 0; i < kMaxRequests; ++i) {
    api::HttpResponse response = app->Handle(request);
    if (response.status == 500) {
      std::fprintf(stderr, "http_fuzzer: %s %s answered 500: %s\n", request.method.c_str(),
                   request.target.c_str(), response.body.c_str());
      std::abort();
    }
    if (i + 1 == kMaxRequests || !NextRequest(input, &request)) break;
  }
  return 0;
}
