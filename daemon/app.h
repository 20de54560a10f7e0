// App: tpuemud's whole object graph, built, started and stopped in one place — the composition
// root. tpuemud's main, the in-process end-to-end tests and the HTTP fuzzer all run this same App,
// so every route, the auth layer and the observers are wired exactly once.
//
// Start order: open the store, build the managers and the router (every route), serve HTTP
// (/healthz answers at once), recover nodes and jobs from the store, start the background
// observers and the retention pruner, then /readyz turns 200. Stop order is the reverse: stop
// accepting and drain in-flight requests while running jobs stop (interrupted, not cancelled: they
// go back to QUEUED in the store and re-run after a restart), stop the timers, flush the observers,
// close the store.
//
// Threads: Start/Stop from one thread (main or a test); everything else is thread-safe as the
// objects it exposes are. The App owns every object it builds; references it returns are valid
// until it is destroyed.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/auth.h"
#include "api/http_server.h"
#include "api/http_types.h"
#include "api/router.h"
#include "base/status.h"
#include "service/faults/maintenance.h"
#include "service/faults/preemption.h"
#include "service/jobs/job_spec.h"
#include "service/nodes/node_manager.h"
#include "service/observability/observability.h"
#include "service/queued_resources/queued_resource_manager.h"
#include "service/replicas/replica_set.h"
#include "service/retention/retention_pruner.h"

namespace tpuemu::db {
class Store;
}
namespace tpuemu::service {
class JobManager;
class ProjectMetadata;
class WorkerManager;
}  // namespace tpuemu::service

namespace tpuemu::daemon {

// The faults tpuemud can cause (service/faults/).
struct FaultOptions {
  uint64_t seed = 1;  // --fault-seed: one seed for every random fault
  double preemption_rate_per_hour = 0;
  int64_t preemption_sweep_ms = 1000;
  int64_t maintenance_duration_ms = 30000;
};

// TPU VM workers as Linux sandboxes (service/workers/, sandbox/).
struct WorkerSettings {
  // "auto": sandboxes when the host allows them (else nodes say why); "off": none (nodes carry
  // no sandbox field at all: the in-process tests' default).
  std::string mode = "off";
  std::string dir;                  // each worker's files
  std::vector<std::string> hidden;  // host paths no worker may see (tpuemud's data folder)
  std::string subnet;  // workers' internal addresses; "" = 10.<n>.0.0/16, n as their 127.<n>
  std::string helper;  // tpuemu-sandbox; empty = found by sandbox::Probe
  uint16_t ssh_port = 22;
  int64_t memory_limit_bytes = int64_t{4} << 30;
  int64_t pids_limit = 4096;
  int64_t disk_bytes = 0;        // each worker's boot disk; 0 = none
  int64_t disk_floor_bytes = 0;  // no boot below this much free space
  int64_t stop_grace_ms = 10000;
  int64_t boot_timeout_ms = 60000;
  int max_workers_per_node = 32;
  int max_workers = 1024;
  // The host's budgets for all sandboxed workers together (service/workers/host_capacity.h): -1 =
  // derived from this host (MemTotal; 3/4 of the lesser of pid_max and threads-max; the free
  // space of `dir`), 0 = none.
  int64_t memory_budget_bytes = -1;
  int64_t pids_budget = -1;
  int64_t disk_budget_bytes = 0;
};

struct AppOptions {
  std::string db_path = ":memory:";  // a SQLite file, ":memory:", or a postgresql:// URL
  service::NodeManagerOptions nodes;
  service::QueuedResourceOptions queued_resources;
  FaultOptions faults;
  service::JobLimits jobs;
  service::ObservabilityOptions observability;
  service::RetentionOptions retention;  // what the background pruner deletes, and how often
  // This process among the replicas of one PostgreSQL store (id, heartbeat, lease).
  service::ReplicaOptions replica;
  api::HttpServerOptions http;  // port 0 = any free port (see App::port())
  // false: no socket at all (the HTTP fuzzer calls Handle() directly).
  bool serve_http = true;
  // Threads that run mutations while they wait for their group commit (never IO threads).
  int writer_threads = 32;
  int engine_threads = 0;               // engine::Pool threads; 0 = one per core
  std::optional<api::AuthPolicy> auth;  // set: API requests need a bearer token
  std::string web_dir;                  // the dashboard served at /; empty = none
  std::string chartjs_dir;              // served at /vendor/chart.js/ when web_dir is set
  std::string xterm_dir;                // served at /vendor/xterm/ when web_dir is set
  std::string xterm_lib_dir;            // served at /vendor/xterm/lib/ (xterm.js's modules)
  // The dashboard's terminals into workers open at once (api/terminal_session.h).
  int max_terminals = 32;
  int max_terminals_per_worker = 4;
  bool log_requests = true;  // one spdlog line per answered request
  WorkerSettings workers;
};

class App {
 public:
  // Builds and starts everything (see the header comment). Errors: the store cannot be opened
  // (its Status), the port cannot be bound (UNAVAILABLE), recovery failed.
  static Result<std::unique_ptr<App>> Start(AppOptions options);
  ~App();  // Stop(2 s) if not stopped yet
  App(const App&) = delete;
  App& operator=(const App&) = delete;

  // Graceful and idempotent: in-flight requests get up to `drain` to finish. Returns the status
  // of closing the store.
  Status Stop(std::chrono::milliseconds drain = std::chrono::seconds(10));

  // The bound port (0 when serve_http is false).
  uint16_t port() const;
  int active_connections() const;
  // One request through the same handler the server uses (auth, router, static files), without
  // a socket; waits for async routes.
  api::HttpResponse Handle(const api::HttpRequest& request) const;
  // Every (method, pattern) the router serves, in registration order (the static-file fallback
  // is not a route).
  std::vector<api::RouteInfo> Routes() const;

  // The batcher, Operations, quota and event sink every node and queued resource write shares.
  service::WritePath& write_path();
  service::NodeManager& nodes();
  service::QueuedResourceManager& queued_resources();
  service::Preempter& preempter();
  service::MaintenanceManager& maintenance();
  service::JobManager& jobs();
  service::Observability& obs();
  service::WorkerManager& workers();

  struct Graph;  // every object of the graph, in construction order (app.cpp)

 private:
  explicit App(AppOptions options);
  Status Build();

  AppOptions options_;
  std::unique_ptr<Graph> graph_;
  bool stopped_ = false;
};

}  // namespace tpuemu::daemon
