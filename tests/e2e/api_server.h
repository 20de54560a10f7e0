// ApiServer: the whole tpuemud stack in-process — the same daemon::App tpuemud runs, over an
// in-memory SQLite store (or a fresh PostgreSQL database for the pg.* runs, tests/support/
// test_store.h) on an ephemeral port — for integration tests that speak real HTTP through
// HttpClient.
#pragma once

#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "daemon/app.h"
#include "tests/support/http_client.h"
#include "tests/support/test_store.h"
#include "tests/support/wait_for.h"

namespace tpuemu::testing {

class ApiServer {
 public:
  explicit ApiServer(service::NodeManagerOptions options = {.provisioning_delay_ms = 0,
                                                            .transition_delay_ms = 0},
                     api::HttpServerOptions http = {},
                     // No background sampling by default: tests call SampleNow() themselves.
                     service::ObservabilityOptions observability = {.utilization_interval_ms = 0},
                     service::JobLimits jobs = {})
      : ApiServer(
            daemon::AppOptions{.nodes = options,
                               .queued_resources = {.accept_delay_ms = 0, .transition_delay_ms = 0},
                               .jobs = jobs,
                               .observability = std::move(observability),
                               .http = http}) {}

  // Any AppOptions (faults, queued resources, …); the port, threads and request logging are set
  // here as for every test server.
  explicit ApiServer(daemon::AppOptions options) {
    options.http.port = 0;
    options.writer_threads = 8;
    options.engine_threads = 2;
    options.log_requests = false;
    if (options.db_path == ":memory:") options.db_path = TestStoreLocation();
    Result<std::unique_ptr<daemon::App>> app = daemon::App::Start(std::move(options));
    EXPECT_TRUE(app.ok()) << app.status().ToString();
    if (app.ok()) app_ = std::move(app).value();
  }

  uint16_t port() const { return app_->port(); }
  int active_connections() const { return app_->active_connections(); }
  service::NodeManager& nodes() { return app_->nodes(); }
  daemon::App& app() { return *app_; }
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
