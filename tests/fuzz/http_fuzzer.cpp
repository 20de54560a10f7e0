// Fuzzes HTTP request handling: raw bytes -> Boost.Beast's request parser with tpuemud's default
// limits (body 1 MiB, header 16 KiB) -> the HttpRequest the server builds -> api::Router::Handle
// on a router wired with every real route (emulator, nodes, operations, catalog, jobs) over an
// in-memory store, as service/tpuemud_main.cpp wires them. One input may hold up to
// kMaxRequests pipelined requests (so a create can be followed by a get, a job submit, ...);
// the whole stack is built fresh per input so that inputs do not depend on each other.
//
// Oracle besides "no crash, leak, UB": the router never answers 500 — bad input is a 4xx in
// Google's envelope (DESIGN.md). Jobs run for real but under small limits (tensors of at most
// 4096 elements, 4 steps) so an input cannot ask for minutes of engine work.
//
// The Beast message -> HttpRequest conversion mirrors Session::OnRead in api/http_server.cpp
// (kept there, in the one Beast translation unit of the daemon).
#include <cctype>
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

#include "api/http_server.h"
#include "api/router.h"
#include "api/routes.h"
#include "db/store.h"
#include "engine/compile_cache.h"
#include "engine/pool.h"
#include "service/catalog.h"
#include "service/job_manager.h"
#include "service/node_manager.h"
#include "service/scheduler.h"

namespace {

using namespace tpuemu;  // NOLINT: a fuzz target's one job
namespace beast = boost::beast;
namespace http = beast::http;

constexpr int kMaxRequests = 8;

// The daemon's stack without the socket layer; destroyed in the order tpuemud shuts down.
class Stack {
 public:
  Stack() {
    store_ = std::move(db::Store::Open(":memory:").value());
    nodes_ = std::make_unique<service::NodeManager>(
        *store_, scheduler_, service::Catalog::Default(),
        service::NodeManagerOptions{.provisioning_delay_ms = 0, .transition_delay_ms = 0});
    api::RegisterEmulatorRoutes(router_,
                                {.ready = &ready_, .reset = [this] { return nodes_->Reset(); }});
    api::RegisterNodeRoutes(router_, *nodes_, writers_);
    api::RegisterOperationRoutes(router_, *nodes_, writers_);
    api::RegisterCatalogRoutes(router_, service::Catalog::Default());
    jobs_ = std::make_unique<service::JobManager>(
        *store_, *nodes_, scheduler_, pool_, cache_,
        service::JobLimits{.max_steps = 4, .max_timeout_seconds = 60, .max_tensor_elements = 4096});
    nodes_->SetStateObserver([this](const service::Node& node, service::NodeState previous) {
      jobs_->OnNodeStateChanged(node, previous);
    });
    api::RegisterJobRoutes(router_, *jobs_, scheduler_, writers_);
  }
  ~Stack() {
    scheduler_.Stop();
    jobs_->Shutdown();
  }

  const api::Router& router() const { return router_; }

 private:
  std::atomic<bool> ready_{true};
  service::Scheduler scheduler_;
  std::unique_ptr<db::Store> store_;
  std::unique_ptr<service::NodeManager> nodes_;
  engine::Pool pool_{1};
  engine::CompileCache cache_;
  std::unique_ptr<service::JobManager> jobs_;  // destroyed before nodes_
  api::WorkerThreads writers_{2};
  api::Router router_;
};

// Parses one request from the front of `input`; returns false when no whole request is there.
bool NextRequest(beast::string_view& input, api::HttpRequest* out) {
  const api::HttpServerOptions limits;  // tpuemud's defaults
  http::request_parser<http::string_body> parser;
  parser.body_limit(limits.body_limit_bytes);
  parser.header_limit(static_cast<std::uint32_t>(limits.header_limit_bytes));
  parser.eager(true);
  beast::error_code ec;
  while (!parser.is_done()) {
    if (input.empty()) {
      // The client closed: only a body that runs to EOF can complete now.
      if (!parser.got_some()) return false;
      parser.put_eof(ec);
      if (ec || !parser.is_done()) return false;
      break;
    }
    std::size_t used = parser.put(boost::asio::buffer(input.data(), input.size()), ec);
    input.remove_prefix(used);
    if (ec == http::error::need_more) {
      if (used == 0) return false;  // an incomplete header: no more bytes will come
      ec = {};
      continue;
    }
    if (ec) return false;  // the server answers 400/413/431 and closes: nothing is routed
  }
  http::request<http::string_body> message = parser.release();
  *out = api::MakeRequest(std::string(message.method_string()), std::string(message.target()),
                          std::move(message.body()));
  for (const auto& field : message) {
    std::string name(field.name_string());
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    auto [it, inserted] = out->headers.emplace(name, std::string(field.value()));
    if (!inserted) it->second += ", " + std::string(field.value());
  }
  out->remote_address = "127.0.0.1:1";
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
  Stack stack;
  for (int i = 0; i < kMaxRequests; ++i) {
    api::HttpResponse response = stack.router().Handle(request);
    if (response.status == 500) {
      std::fprintf(stderr, "http_fuzzer: %s %s answered 500: %s\n", request.method.c_str(),
                   request.target.c_str(), response.body.c_str());
      std::abort();
    }
    if (i + 1 == kMaxRequests || !NextRequest(input, &request)) break;
  }
  return 0;
}
