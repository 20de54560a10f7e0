// ApiServer: the whole tpuemud stack in-process (store, managers, router, Beast server on an
// ephemeral port) for integration tests that speak real HTTP through HttpClient.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "api/http_server.h"
#include "api/router.h"
#include "api/routes.h"
#include "db/store.h"
#include "engine/compile_cache.h"
#include "engine/pool.h"
#include "service/catalog.h"
#include "service/job_manager.h"
#include "service/node_manager.h"
#include "service/observability.h"
#include "service/scheduler.h"
#include "tests/service/wait_for.h"
#include "tests/support/http_client.h"

namespace tpuemu::testing {

class ApiServer {
 public:
  explicit ApiServer(service::NodeManagerOptions options = {.provisioning_delay_ms = 0,
                                                            .transition_delay_ms = 0},
                     api::HttpServerOptions http = {},
                     // No background sampling by default: tests call SampleNow() themselves.
                     service::ObservabilityOptions observability = {.utilization_interval_ms = 0}) {
    store_ = std::move(db::Store::Open(":memory:").value());
    nodes_ = std::make_unique<service::NodeManager>(*store_, scheduler_,
                                                    service::Catalog::Default(), options);
    api::RegisterEmulatorRoutes(router_, {.ready = &ready_, .reset = [this] {
                                            Status s = nodes_->Reset();
                                            if (s.ok()) obs_->Reset();
                                            return s;
                                          }});
    api::RegisterNodeRoutes(router_, *nodes_, writers_);
    api::RegisterOperationRoutes(router_, *nodes_, writers_);
    api::RegisterCatalogRoutes(router_, service::Catalog::Default());
    jobs_ = std::make_unique<service::JobManager>(*store_, *nodes_, scheduler_, pool_, cache_);
    nodes_->SetStateObserver([this](const service::Node& node, service::NodeState previous) {
      jobs_->OnNodeStateChanged(node, previous);
    });
    api::RegisterJobRoutes(router_, *jobs_, scheduler_, writers_);
    obs_ = std::make_unique<service::Observability>(*store_, *nodes_, *jobs_, pool_, cache_,
                                                    std::move(observability));
    api::RegisterObservabilityRoutes(router_, *obs_, *nodes_, scheduler_);
    http.port = 0;
    server_ = std::make_unique<api::HttpServer>(
        http, router_.AsHandler(), [this](const api::AccessLogEntry& e) {
          obs_->http().Observe(e.method, e.route, e.status, e.latency_seconds);
        });
    Status s = server_->Start();
    EXPECT_TRUE(s.ok()) << s.ToString();
    obs_->Start();
    ready_ = true;
  }
  ~ApiServer() {
    server_->Stop(std::chrono::seconds(2));
    scheduler_.Stop();
    jobs_->Shutdown();
    obs_->Stop();
  }

  uint16_t port() const { return server_->port(); }
  int active_connections() const { return server_->active_connections(); }
  service::NodeManager& nodes() { return *nodes_; }
  service::Observability& obs() { return *obs_; }

 private:
  std::atomic<bool> ready_{false};
  service::Scheduler scheduler_;
  std::unique_ptr<db::Store> store_;
  std::unique_ptr<service::NodeManager> nodes_;
  engine::Pool pool_{2};
  engine::CompileCache cache_;
  std::unique_ptr<service::JobManager> jobs_;    // declared after nodes_: destroyed before it
  std::unique_ptr<service::Observability> obs_;  // after jobs_: destroyed before the managers
  api::WorkerThreads writers_{8};
  api::Router router_;
  std::unique_ptr<api::HttpServer> server_;
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
