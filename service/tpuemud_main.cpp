// tpuemud: the composition root. The one file in service/ that may include api/: it opens the
// store, builds the managers, registers the routes, serves HTTP and shuts everything down in order.
#include <csignal>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include "api/auth.h"
#include "api/http_server.h"
#include "api/router.h"
#include "api/routes.h"
#include "api/static_files.h"
#include "db/store.h"
#include "engine/compile_cache.h"
#include "engine/pool.h"
#include "service/catalog.h"
#include "service/db_translate.h"
#include "service/job_manager.h"
#include "service/node_manager.h"
#include "service/observability.h"
#include "service/scheduler.h"

namespace {

using namespace tpuemu;  // NOLINT: main is the one place that sees every layer

struct Flags {
  std::string host = "127.0.0.1";
  int port = 8470;
  std::string data_dir = "data";
  std::string db_path;  // default: <data_dir>/tpuemu.db
  int64_t provisioning_delay_ms = 1000;
  int64_t transition_delay_ms = 500;
  int64_t zone_capacity_tensorcores = 65536;
  std::string log_level = "info";
  int io_threads = 2;
  int writer_threads = 32;
  std::size_t body_limit_bytes = 1 << 20;
  std::size_t header_limit_bytes = 16 << 10;
  int64_t read_timeout_ms = 30000;
  int64_t idle_timeout_ms = 60000;
  int max_connections = 1024;
  int64_t max_job_seconds = 86400;
  int64_t project_quota_tensorcores = 0;
  std::string auth_tokens;
  int64_t utilization_interval_ms = 10000;
  int64_t utilization_retention_seconds = 86400;
  int64_t events_retention_seconds = 7 * 86400;
  int64_t events_max = 100000;
  std::string web_dir;  // default: DefaultWebDir()
  std::string chartjs_dir = "/usr/share/javascript/chart.js";
};

// The dashboard folder when --web-dir is not given: `web` of the source tree next to the build
// tree (build/service/tpuemud -> ../../web), of an install prefix (bin/ -> ../share/tpuemu/web),
// or of the working directory, whichever exists first.
std::string DefaultWebDir() {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path exe_dir = fs::read_symlink("/proc/self/exe", ec).parent_path();
  std::vector<fs::path> candidates;
  if (!ec) {
    candidates.push_back(exe_dir / ".." / ".." / "web");
    candidates.push_back(exe_dir / ".." / "share" / "tpuemu" / "web");
  }
  candidates.push_back(fs::current_path(ec) / "web");
  for (const fs::path& dir : candidates) {
    if (fs::is_regular_file(dir / "index.html", ec)) return fs::weakly_canonical(dir, ec).string();
  }
  return "web";
}

void AddFlags(CLI::App& app, Flags& f) {
  app.add_option("--host", f.host, "Address to listen on")
      ->envname("TPUEMU_HOST")
      ->capture_default_str();
  app.add_option("--port", f.port, "Port to listen on (0 = any free port)")
      ->envname("TPUEMU_PORT")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  app.add_option("--data-dir", f.data_dir, "Folder for the SQLite database")
      ->envname("TPUEMU_DATA_DIR")
      ->capture_default_str();
  app.add_option("--db", f.db_path,
                 "SQLite file (default <data-dir>/tpuemu.db); ':memory:' for a "
                 "throwaway store")
      ->envname("TPUEMU_DB");
  app.add_option("--provisioning-delay-ms", f.provisioning_delay_ms, "CREATING -> READY delay")
      ->envname("TPUEMU_PROVISIONING_DELAY_MS")
      ->check(CLI::Range(int64_t{0}, int64_t{3600000}))
      ->capture_default_str();
  app.add_option("--transition-delay-ms", f.transition_delay_ms,
                 "Delay of start, stop, delete and update operations")
      ->envname("TPUEMU_TRANSITION_DELAY_MS")
      ->check(CLI::Range(int64_t{0}, int64_t{3600000}))
      ->capture_default_str();
  app.add_option("--zone-capacity-tensorcores", f.zone_capacity_tensorcores,
                 "TensorCores one zone holds; creates past it fail with RESOURCE_EXHAUSTED")
      ->envname("TPUEMU_ZONE_CAPACITY_TENSORCORES")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--log-level", f.log_level, "trace, debug, info, warn, error, off")
      ->envname("TPUEMU_LOG_LEVEL")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "critical", "off"}))
      ->capture_default_str();
  app.add_option("--io-threads", f.io_threads, "HTTP IO threads")
      ->envname("TPUEMU_IO_THREADS")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  app.add_option("--writer-threads", f.writer_threads,
                 "Threads that run mutations (they wait for group commits, not CPU)")
      ->envname("TPUEMU_WRITER_THREADS")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  app.add_option("--body-limit-bytes", f.body_limit_bytes, "Largest request body (413 past it)")
      ->envname("TPUEMU_BODY_LIMIT_BYTES")
      ->capture_default_str();
  app.add_option("--header-limit-bytes", f.header_limit_bytes,
                 "Largest request header (431 past it)")
      ->envname("TPUEMU_HEADER_LIMIT_BYTES")
      ->capture_default_str();
  app.add_option("--read-timeout-ms", f.read_timeout_ms, "Time to receive one whole request")
      ->envname("TPUEMU_READ_TIMEOUT_MS")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--idle-timeout-ms", f.idle_timeout_ms, "Idle keep-alive connection timeout")
      ->envname("TPUEMU_IDLE_TIMEOUT_MS")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--max-connections", f.max_connections, "Open connections (503 past it)")
      ->envname("TPUEMU_MAX_CONNECTIONS")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--max-job-seconds", f.max_job_seconds,
                 "Longest a job may run (TIMED_OUT past it; caps timeoutSeconds); 0 = no limit")
      ->envname("TPUEMU_MAX_JOB_SECONDS")
      ->check(CLI::Range(int64_t{0}, int64_t{31536000}))
      ->capture_default_str();
  app.add_option("--project-quota-tensorcores", f.project_quota_tensorcores,
                 "TensorCores one project may hold (429 RESOURCE_EXHAUSTED past it); 0 = unlimited")
      ->envname("TPUEMU_PROJECT_QUOTA_TENSORCORES")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--auth-tokens", f.auth_tokens,
                 "JSON file of bearer tokens (projects, role); empty = auth off")
      ->envname("TPUEMU_AUTH_TOKENS");
  app.add_option("--utilization-interval-ms", f.utilization_interval_ms,
                 "Per-node utilization sampling interval (0 = no sampling)")
      ->envname("TPUEMU_UTILIZATION_INTERVAL_MS")
      ->check(CLI::Range(int64_t{0}, int64_t{86400000}))
      ->capture_default_str();
  app.add_option("--utilization-retention-seconds", f.utilization_retention_seconds,
                 "How long utilization samples are kept")
      ->envname("TPUEMU_UTILIZATION_RETENTION_SECONDS")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--events-retention-seconds", f.events_retention_seconds,
                 "How long node and job events are kept")
      ->envname("TPUEMU_EVENTS_RETENTION_SECONDS")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--events-max", f.events_max, "Most events kept (oldest pruned first)")
      ->envname("TPUEMU_EVENTS_MAX")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--web-dir", f.web_dir,
                 "Dashboard files served at / (default: the web folder of the source tree)")
      ->envname("TPUEMU_WEB_DIR");
  app.add_option("--chartjs-dir", f.chartjs_dir,
                 "Chart.js files served at /vendor/chart.js/ (Debian's libjs-chart.js)")
      ->envname("TPUEMU_CHARTJS_DIR")
      ->capture_default_str();
}

// Blocks SIGINT/SIGTERM in every thread (call before starting any) so one sigwait() sees them.
sigset_t BlockShutdownSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  return set;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tpuemud: a local emulator of Google Cloud TPU VMs (Cloud TPU API v2)"};
  Flags flags;
  AddFlags(app, flags);
  CLI11_PARSE(app, argc, argv);

  spdlog::set_level(spdlog::level::from_str(flags.log_level));
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
  sigset_t signals = BlockShutdownSignals();

  std::string db_path = flags.db_path;
  if (db_path.empty()) db_path = (std::filesystem::path(flags.data_dir) / "tpuemu.db").string();
  spdlog::info(
      "This is the Cloud TPU emulator. Implementation may be incomplete or differ from the "
      "real system.");

  std::optional<api::AuthPolicy> auth;
  if (!flags.auth_tokens.empty()) {
    Result<api::AuthPolicy> loaded = api::AuthPolicy::Load(flags.auth_tokens);
    if (!loaded.ok()) {
      spdlog::critical("--auth-tokens: {}", loaded.status().ToString());
      return 1;
    }
    auth = std::move(loaded).value();
    spdlog::info("auth on: {} token(s) from {}", auth->size(), flags.auth_tokens);
  }

  std::atomic<bool> ready{false};
  db::DbResult<std::unique_ptr<db::Store>> store = db::Store::Open(db_path);
  if (!store.ok()) {
    spdlog::critical("cannot open the store at {}: {}", db_path, store.status().ToString());
    return 1;
  }
  service::Scheduler scheduler;
  service::NodeManager nodes(**store, scheduler, service::Catalog::Default(),
                             {.provisioning_delay_ms = flags.provisioning_delay_ms,
                              .transition_delay_ms = flags.transition_delay_ms,
                              .zone_capacity_tensorcores = flags.zone_capacity_tensorcores,
                              .project_quota_tensorcores = flags.project_quota_tensorcores});

  // Mutations block until their group commit: they run here, never on IO threads. Enough of them
  // wait together to fill a commit batch.
  api::WorkerThreads writers(flags.writer_threads);
  api::Router router;
  // Set once `obs` exists (below): reset also forgets the sampler's in-memory activity.
  std::function<void()> reset_observability;
  api::RegisterEmulatorRoutes(router, {.ready = &ready, .reset = [&] {
                                         Status s = nodes.Reset();
                                         if (s.ok() && reset_observability) reset_observability();
                                         return s;
                                       }});
  api::RegisterNodeRoutes(router, nodes, writers);
  api::RegisterOperationRoutes(router, nodes, writers);
  api::RegisterCatalogRoutes(router, service::Catalog::Default());
  // Jobs run on one engine pool (one thread per core) with one compile cache, shared by all nodes.
  engine::Pool pool;
  engine::CompileCache compile_cache;
  service::JobLimits job_limits;
  job_limits.max_job_seconds = flags.max_job_seconds;
  service::JobManager jobs(**store, nodes, scheduler, pool, compile_cache, job_limits);
  nodes.SetStateObserver([&jobs](const service::Node& node, service::NodeState previous) {
    jobs.OnNodeStateChanged(node, previous);
  });
  api::RegisterJobRoutes(router, jobs, scheduler, writers);
  // Events, utilization history, Prometheus and the torch_xla-style reports (hooks observers).
  service::Observability obs(**store, nodes, jobs, pool, compile_cache,
                             {.utilization_interval_ms = flags.utilization_interval_ms,
                              .utilization_retention_seconds = flags.utilization_retention_seconds,
                              .event_retention_seconds = flags.events_retention_seconds,
                              .max_events = flags.events_max});
  reset_observability = [&obs] { obs.Reset(); };
  api::RegisterObservabilityRoutes(router, obs, nodes, scheduler);
  api::RegisterHardwareRoutes(router, service::Catalog::Default(), flags.zone_capacity_tensorcores);
  // The dashboard: GET requests no API route matches are static files.
  if (flags.web_dir.empty()) flags.web_dir = DefaultWebDir();
  api::StaticFiles web(flags.web_dir);
  web.Mount("/vendor/chart.js/", flags.chartjs_dir);
  router.SetFallback(
      [&web](const api::HttpRequest& req, const api::PathParams&) { return web.Serve(req); });

  api::HttpServerOptions http;
  http.host = flags.host;
  http.port = static_cast<uint16_t>(flags.port);
  http.io_threads = flags.io_threads;
  http.body_limit_bytes = flags.body_limit_bytes;
  http.header_limit_bytes = flags.header_limit_bytes;
  http.read_timeout = std::chrono::milliseconds(flags.read_timeout_ms);
  http.idle_timeout = std::chrono::milliseconds(flags.idle_timeout_ms);
  http.max_connections = flags.max_connections;
  // Auth wraps the whole router so that no route can be reached around it (api/auth.h).
  api::AsyncHandlerFn handler =
      auth ? api::RequireAuth(*auth, router.AsHandler()) : router.AsHandler();
  api::HttpServer server(http, handler, [&obs](const api::AccessLogEntry& e) {
    obs.http().Observe(e.method, e.route, e.status, e.latency_seconds);
    spdlog::info("{} {} => {} ({:.3f} ms)", e.method, e.route.empty() ? "-" : e.route, e.status,
                 e.latency_seconds * 1000);
  });
  if (Status s = server.Start(); !s.ok()) {
    spdlog::critical("{}", s.ToString());
    return 1;
  }
  // Serve /healthz while recovering; /readyz turns 200 only after recovery.
  if (Status s = nodes.Recover(); !s.ok()) {
    spdlog::critical("recovery failed: {}", s.ToString());
    return 1;
  }
  if (Status s = jobs.Recover(); !s.ok()) {
    spdlog::critical("job recovery failed: {}", s.ToString());
    return 1;
  }
  obs.Start();
  ready = true;
  spdlog::info("tpuemud listening on http://{}:{} (store {}, dashboard {})", flags.host,
               server.port(), db_path, flags.web_dir);
  // A line tests and scripts can wait for when --port 0 picks the port.
  std::printf("tpuemud ready on port %u\n", server.port());
  std::fflush(stdout);

  int signal_number = 0;
  sigwait(&signals, &signal_number);
  spdlog::info("signal {}: shutting down (finishing in-flight requests)", signal_number);
  ready = false;
  server.Stop(std::chrono::seconds(10));
  scheduler.Stop();
  jobs.Shutdown();  // cancels running jobs in memory only: they stay RUNNING and re-run on restart
  obs.Stop();       // after everything that notifies it; writes the last queued events
  db::DbStatus closed = (*store)->Close();
  if (!closed.ok()) spdlog::error("closing the store: {}", closed.ToString());
  spdlog::info("bye");
  return 0;
}
