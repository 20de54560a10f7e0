// ApiServer: the whole tpuemud stack in-process — the same daemon::App tpuemud runs, over an
// in-memory store on an ephemeral port — for integration tests that speak real HTTP through
// HttpClient.
#pragma once

#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "daemon/app.h"
#include "tests/support/http_client.h"
#include "tests/support/wait_for.h"

namespace tpuemu::testing {

class ApiServer {
 public:
  explicit ApiServer(service::NodeManagerOptions options = {.provisioning_delay_ms = 0,
                                                            .transition_delay_ms = 0},
                     api::HttpServerOptions http = {},
                     // No background sampling by default: tests call SampleNow() themselves.
                     service::ObservabilityOptions observability = {.utilization_interval_ms = 0},
                     service::JobLimits jobs = {}) {
    http.port = 0;
    Result<std::unique_ptr<daemon::App>> app =
        daemon::App::Start({.nodes = options,
                            .jobs = jobs,
                            .observability = std::move(observability),
                            .http = http,
                            .writer_threads = 8,
                            .engine_threads = 2,
                            .log_requests = false});
    EXPECT_TRUE(app.ok()) << app.status().ToString();
    if (app.ok()) app_ = std::move(app).value();
  }

  uint16_t port() const { return app_->port(); }
  int active_connections() const { return app_->active_connections(); }
  service::NodeManager& nodes() { return app_->nodes(); }
  service::Observability& obs() { return app_->obs(); }

 private:
  std::unique_ptr<daemon::App> app_;
};

// Polls GET /v2/{operation} until done; returns the final Operation JSON (or null on timeout).
inline nlohmann::json WaitOperation(HttpClient& client, const std::string& operation_name) {
  nlohmann::json last;
  WaitFor([&] {
    Result<ClientResponse> r = client.Request("GET", "/v2/" + operation_name);
    if (!r.ok() || r->status != 200) return false;
    last = r->Json();
    return last.value("done", false);
  });
  return last.value("done", false) ? last : nlohmann::json();
}

}  // namespace tpuemu::testing
