#include "daemon/flags.h"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <vector>

#include <CLI/CLI.hpp>

#include "service/nodes/node.h"

namespace tpuemu::daemon {
namespace {

// The dashboard folder when --web-dir is not given: `web` of the source tree next to the build
// tree (build/daemon/tpuemud -> ../../web), of an install prefix (bin/ -> ../share/tpuemu/web),
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

}  // namespace

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
                 "SQLite file (default <data-dir>/tpuemu.db), ':memory:' for a throwaway store, "
                 "or a PostgreSQL URL (postgresql://user@host:5432/db)")
      ->envname("TPUEMU_DB");
  app.add_option("--replica-id", f.replica_id,
                 "This replica's name among the tpuemud processes sharing one PostgreSQL store "
                 "(default host:port; unique among live replicas)")
      ->envname("TPUEMU_REPLICA_ID");
  app.add_option("--replica-heartbeat-ms", f.replica_heartbeat_ms,
                 "How often a replica refreshes its heartbeat in the store")
      ->envname("TPUEMU_REPLICA_HEARTBEAT_MS")
      ->check(CLI::Range(int64_t{50}, int64_t{60000}))
      ->capture_default_str();
  app.add_option("--replica-lease-ms", f.replica_lease_ms,
                 "A replica silent this long is dead: another adopts its nodes and jobs")
      ->envname("TPUEMU_REPLICA_LEASE_MS")
      ->check(CLI::Range(int64_t{200}, int64_t{600000}))
      ->capture_default_str();
  app.add_option("--provisioning-delay-ms", f.provisioning_delay_ms, "CREATING -> READY delay")
      ->envname("TPUEMU_PROVISIONING_DELAY_MS")
      ->check(CLI::Range(int64_t{0}, int64_t{3600000}))
      ->capture_default_str();
  app.add_option("--transition-delay-ms", f.transition_delay_ms,
                 "Delay of start, stop, delete and update operations")
      ->envname("TPUEMU_TRANSITION_DELAY_MS")
      ->check(CLI::Range(int64_t{0}, int64_t{3600000}))
      ->capture_default_str();
  app.add_option(
         "--max-write-lag-ms", f.max_write_lag_ms,
         "Node and queued-resource writes get 429 with a RetryInfo while a due transition waits "
         "longer than this for its commit (0 = never)")
      ->envname("TPUEMU_MAX_WRITE_LAG_MS")
      ->check(CLI::Range(int64_t{0}, int64_t{600000}))
      ->capture_default_str();
  app.add_option("--zone-capacity-tensorcores", f.zone_capacity_tensorcores,
                 "TensorCores one zone holds; creates past it fail with RESOURCE_EXHAUSTED")
      ->envname("TPUEMU_ZONE_CAPACITY_TENSORCORES")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--maintenance-duration-ms", f.maintenance_duration_ms,
                 "How long a maintenance event keeps a node UNHEALTHY_MAINTENANCE")
      ->envname("TPUEMU_MAINTENANCE_DURATION_MS")
      ->check(CLI::Range(int64_t{0}, int64_t{86400000}))
      ->capture_default_str();
  app.add_option("--preemption-rate-per-hour", f.preemption_rate_per_hour,
                 "Random preemptions of each spot/preemptible node per hour (0 = only on request)")
      ->envname("TPUEMU_PREEMPTION_RATE_PER_HOUR")
      ->check(CLI::Range(0.0, 3600.0))
      ->capture_default_str();
  app.add_option("--fault-seed", f.fault_seed,
                 "Seed of the random faults (preemptions, chaos rules): same seed, same faults")
      ->envname("TPUEMU_FAULT_SEED")
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
  app.add_option("--max-job-host-memory-bytes", f.max_job_host_memory_bytes,
                 "Largest planned peak host memory of one job (400 at submit past it); 0 = the "
                 "budget")
      ->envname("TPUEMU_MAX_JOB_HOST_MEMORY_BYTES")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--host-memory-budget-bytes", f.host_memory_budget_bytes,
                 "Host memory the running jobs may plan between them (the others wait QUEUED); "
                 "default half of MemTotal, 0 = unlimited")
      ->envname("TPUEMU_HOST_MEMORY_BUDGET_BYTES")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--shutdown-timeout-ms", f.shutdown_timeout_ms,
                 "Longest SIGTERM/SIGINT shutdown (running jobs re-queued, requests drained); "
                 "past it the process exits anyway")
      ->envname("TPUEMU_SHUTDOWN_TIMEOUT_MS")
      ->check(CLI::Range(int64_t{100}, int64_t{3600000}))
      ->capture_default_str();
  app.add_option("--max-hlo-text-bytes", f.max_hlo_text_bytes,
                 "Largest HLO module an hlo job may submit (400 past it); capped by "
                 "--body-limit-bytes, which carries it inside the JSON body")
      ->envname("TPUEMU_MAX_HLO_TEXT_BYTES")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option(
         "--max-hlo-instructions", f.max_hlo_instructions,
         "Most instructions of an hlo job's module, all computations together (400 past it)")
      ->envname("TPUEMU_MAX_HLO_INSTRUCTIONS")
      ->check(CLI::PositiveNumber)
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
                 "How long events are kept; 0 = forever")
      ->envname("TPUEMU_EVENTS_RETENTION_SECONDS")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--events-max", f.events_max, "Most events kept (oldest pruned first); 0 = any")
      ->envname("TPUEMU_EVENTS_MAX")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--jobs-retention-seconds", f.jobs_retention_seconds,
                 "How long a finished job (with its logs, steps, program) is kept; 0 = forever")
      ->envname("TPUEMU_JOBS_RETENTION_SECONDS")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--job-logs-retention-seconds", f.job_logs_retention_seconds,
                 "How long a finished job's log lines are kept; 0 = as long as the job")
      ->envname("TPUEMU_JOB_LOGS_RETENTION_SECONDS")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--job-steps-retention-seconds", f.job_steps_retention_seconds,
                 "How long a finished job's per-step metrics are kept; 0 = as long as the job")
      ->envname("TPUEMU_JOB_STEPS_RETENTION_SECONDS")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--operations-retention-seconds", f.operations_retention_seconds,
                 "How long a done operation (and a requestId) is kept; 0 = forever")
      ->envname("TPUEMU_OPERATIONS_RETENTION_SECONDS")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--retention-interval-ms", f.retention_interval_ms,
                 "Period of the background retention pruner; 0 = never prune")
      ->envname("TPUEMU_RETENTION_INTERVAL_MS")
      ->check(CLI::Range(int64_t{0}, int64_t{86400000}))
      ->capture_default_str();
  app.add_option("--worker-sandboxes", f.worker_sandboxes,
                 "auto: every TPU VM worker is a Linux sandbox you can SSH into, when this host "
                 "allows it (root, namespaces, overlayfs, sshd); off: nodes are records only")
      ->envname("TPUEMU_WORKER_SANDBOXES")
      ->check(CLI::IsMember({"auto", "off"}))
      ->capture_default_str();
  app.add_option("--workers-dir", f.workers_dir,
                 "Where each worker's files live (default: <data-dir>/workers)")
      ->envname("TPUEMU_WORKERS_DIR");
  app.add_option("--sandbox-helper", f.sandbox_helper,
                 "The tpuemu-sandbox binary (default: next to tpuemud)")
      ->envname("TPUEMU_SANDBOX_HELPER");
  app.add_option("--worker-ssh-port", f.worker_ssh_port,
                 "Port every worker's SSH answers on, at its own loopback address (another "
                 "free port is chosen when it cannot be had)")
      ->envname("TPUEMU_WORKER_SSH_PORT")
      ->check(CLI::Range(1, 65535))
      ->capture_default_str();
  app.add_option("--worker-memory-bytes", f.worker_memory_bytes,
                 "Memory the processes of one worker may use (cgroup); 0 = no limit")
      ->envname("TPUEMU_WORKER_MEMORY_BYTES")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--worker-pids-max", f.worker_pids_max,
                 "Processes and threads one worker may have (cgroup); 0 = no limit")
      ->envname("TPUEMU_WORKER_PIDS_MAX")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--worker-disk-bytes", f.worker_disk_bytes,
                 "Each worker's boot disk (a sparse ext4 image: it costs what is written); "
                 "everything a worker writes lives on it; 0 = no disk, files on the host's")
      ->envname("TPUEMU_WORKER_DISK_BYTES")
      ->check(CLI::Range(int64_t{0}, int64_t{64} << 40))
      ->capture_default_str();
  app.add_option("--worker-subnet", f.worker_subnet,
                 "The range of the workers' internal addresses (networkEndpoints[].ipAddress), "
                 "each node a block of it on its slice's private network; default 10.<n>.0.0/16, "
                 "one per tpuemud")
      ->envname("TPUEMU_WORKER_SUBNET");
  app.add_option("--worker-disk-floor-bytes", f.worker_disk_floor_bytes,
                 "No worker boots while the workers' file system has less free space than this "
                 "(so that the store can always be written)")
      ->envname("TPUEMU_WORKER_DISK_FLOOR_BYTES")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--worker-stop-grace-ms", f.worker_stop_grace_ms,
                 "Between SIGTERM and SIGKILL for a worker's processes (stop, delete, "
                 "preemption, maintenance)")
      ->envname("TPUEMU_WORKER_STOP_GRACE_MS")
      ->check(CLI::Range(int64_t{0}, int64_t{600000}))
      ->capture_default_str();
  app.add_option("--worker-boot-timeout-ms", f.worker_boot_timeout_ms,
                 "Longest a node's workers may take to answer SSH before it turns READY anyway "
                 "(the failed workers say why)")
      ->envname("TPUEMU_WORKER_BOOT_TIMEOUT_MS")
      ->check(CLI::Range(int64_t{1000}, int64_t{3600000}))
      ->capture_default_str();
  app.add_option("--worker-max-per-node", f.worker_max_per_node,
                 "Nodes with more workers than this are not sandboxed (they say why)")
      ->envname("TPUEMU_WORKER_MAX_PER_NODE")
      ->check(CLI::Range(1, 62))
      ->capture_default_str();
  app.add_option("--worker-max", f.worker_max,
                 "Sandboxed workers of all live nodes together: a create past it is refused as "
                 "a zone out of capacity (RESOURCE_EXHAUSTED), a queued resource waits")
      ->envname("TPUEMU_WORKER_MAX")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  app.add_option("--worker-memory-budget-bytes", f.worker_memory_budget_bytes,
                 "The sum of the sandboxed workers' memory limits (--worker-memory-bytes each) "
                 "this host allows, as --worker-max; -1 = MemTotal, 0 = no budget")
      ->envname("TPUEMU_WORKER_MEMORY_BUDGET_BYTES")
      ->check(CLI::Range(int64_t{-1}, std::numeric_limits<int64_t>::max()))
      ->capture_default_str();
  app.add_option("--worker-pids-budget", f.worker_pids_budget,
                 "The sum of the sandboxed workers' pids limits (--worker-pids-max each) this "
                 "host allows, as --worker-max; -1 = 3/4 of the lesser of kernel.pid_max and "
                 "kernel.threads-max, 0 = no budget")
      ->envname("TPUEMU_WORKER_PIDS_BUDGET")
      ->check(CLI::Range(int64_t{-1}, std::numeric_limits<int64_t>::max()))
      ->capture_default_str();
  app.add_option("--worker-disk-budget-bytes", f.worker_disk_budget_bytes,
                 "The sum of the sandboxed workers' boot disks (--worker-disk-bytes each, counted "
                 "at full size though sparse) this host allows, as --worker-max; -1 = the free "
                 "space of --workers-dir at startup, 0 = no budget (--worker-disk-floor-bytes "
                 "still guards the host)")
      ->envname("TPUEMU_WORKER_DISK_BUDGET_BYTES")
      ->check(CLI::Range(int64_t{-1}, std::numeric_limits<int64_t>::max()))
      ->capture_default_str();
  app.add_option("--web-dir", f.web_dir,
                 "Dashboard files served at / (default: the web folder of the source tree)")
      ->envname("TPUEMU_WEB_DIR");
  app.add_option("--chartjs-dir", f.chartjs_dir,
                 "Chart.js files served at /vendor/chart.js/ (Debian's libjs-chart.js)")
      ->envname("TPUEMU_CHARTJS_DIR")
      ->capture_default_str();
  app.add_option("--xterm-dir", f.xterm_dir,
                 "xterm.js files served at /vendor/xterm/ (Debian's libjs-xterm): the "
                 "dashboard's terminal into a worker")
      ->envname("TPUEMU_XTERM_DIR")
      ->capture_default_str();
  // Debian 12's libjs-xterm (3.8) ships its CSS and addons but the terminal itself only as
  // CommonJS modules, in node-xterm: web/js/terminal.js loads them from here.
  app.add_option("--xterm-lib-dir", f.xterm_lib_dir,
                 "xterm.js's modules served at /vendor/xterm/lib/ (Debian's node-xterm)")
      ->envname("TPUEMU_XTERM_LIB_DIR")
      ->capture_default_str();
  app.add_option("--max-terminals", f.max_terminals,
                 "Terminals into workers (the dashboard's SSH) open at once, in all")
      ->check(CLI::Range(0, 4096))
      ->capture_default_str();
  app.add_option("--max-terminals-per-worker", f.max_terminals_per_worker,
                 "Terminals open at once into one worker")
      ->check(CLI::Range(0, 1024))
      ->capture_default_str();
}

std::string DbPath(const Flags& flags) {
  if (!flags.db_path.empty()) return flags.db_path;
  return (std::filesystem::path(flags.data_dir) / "tpuemu.db").string();
}

Result<AppOptions> ToAppOptions(const Flags& flags) {
  AppOptions o;
  o.db_path = DbPath(flags);
  o.nodes = {.provisioning_delay_ms = flags.provisioning_delay_ms,
             .transition_delay_ms = flags.transition_delay_ms,
             .zone_capacity_tensorcores = flags.zone_capacity_tensorcores,
             .project_quota_tensorcores = flags.project_quota_tensorcores,
             .max_write_lag_ms = flags.max_write_lag_ms};
  o.queued_resources = {.accept_delay_ms = flags.transition_delay_ms,
                        .transition_delay_ms = flags.transition_delay_ms};
  o.faults = {.seed = flags.fault_seed,
              .preemption_rate_per_hour = flags.preemption_rate_per_hour,
              .maintenance_duration_ms = flags.maintenance_duration_ms};
  if (flags.replica_lease_ms < 2 * flags.replica_heartbeat_ms) {
    return Status::InvalidArgument(
        "--replica-lease-ms must be at least twice --replica-heartbeat-ms");
  }
  o.replica = {.id = flags.replica_id,
               .heartbeat_ms = flags.replica_heartbeat_ms,
               .lease_ms = flags.replica_lease_ms};
  o.jobs.max_job_seconds = flags.max_job_seconds;
  o.jobs.max_job_host_memory_bytes = flags.max_job_host_memory_bytes;
  o.jobs.host_memory_budget_bytes = flags.host_memory_budget_bytes;
  // The text arrives inside the body: a larger limit could never be reached.
  o.jobs.max_hlo_text_bytes =
      std::min(flags.max_hlo_text_bytes, static_cast<int64_t>(flags.body_limit_bytes));
  o.jobs.max_hlo_instructions = flags.max_hlo_instructions;
  o.observability = {.utilization_interval_ms = flags.utilization_interval_ms,
                     .utilization_retention_seconds = flags.utilization_retention_seconds};
  o.retention = {.interval_ms = flags.retention_interval_ms,
                 .jobs_seconds = flags.jobs_retention_seconds,
                 .job_logs_seconds = flags.job_logs_retention_seconds,
                 .job_steps_seconds = flags.job_steps_retention_seconds,
                 .operations_seconds = flags.operations_retention_seconds,
                 .events_seconds = flags.events_retention_seconds,
                 .max_events = flags.events_max};
  o.http.host = flags.host;
  o.http.port = static_cast<uint16_t>(flags.port);
  o.http.io_threads = flags.io_threads;
  o.http.body_limit_bytes = flags.body_limit_bytes;
  o.http.header_limit_bytes = flags.header_limit_bytes;
  o.http.read_timeout = std::chrono::milliseconds(flags.read_timeout_ms);
  o.http.idle_timeout = std::chrono::milliseconds(flags.idle_timeout_ms);
  o.http.max_connections = flags.max_connections;
  o.writer_threads = flags.writer_threads;
  if (!flags.auth_tokens.empty()) {
    Result<api::AuthPolicy> loaded = api::AuthPolicy::Load(flags.auth_tokens);
    if (!loaded.ok()) {
      return Status(loaded.status().code(), "--auth-tokens: " + loaded.status().message());
    }
    o.auth = std::move(loaded).value();
  }
  o.web_dir = flags.web_dir.empty() ? DefaultWebDir() : flags.web_dir;
  o.chartjs_dir = flags.chartjs_dir;
  o.xterm_dir = flags.xterm_dir;
  o.xterm_lib_dir = flags.xterm_lib_dir;
  o.max_terminals = flags.max_terminals;
  o.max_terminals_per_worker = flags.max_terminals_per_worker;
  o.workers.mode = flags.worker_sandboxes;
  // Absolute, so that a relative --data-dir (scripts/run's "data") still gives sandboxes, whose
  // helper runs from another working directory.
  const std::filesystem::path data_dir = std::filesystem::absolute(flags.data_dir);
  o.workers.dir = flags.workers_dir.empty() ? (data_dir / "workers").string()
                                            : std::filesystem::absolute(flags.workers_dir).string();
  o.workers.hidden = {data_dir.string()};
  o.workers.helper = flags.sandbox_helper;
  o.workers.ssh_port = static_cast<uint16_t>(flags.worker_ssh_port);
  o.workers.memory_limit_bytes = flags.worker_memory_bytes;
  o.workers.pids_limit = flags.worker_pids_max;
  o.workers.disk_bytes = flags.worker_disk_bytes;
  o.workers.disk_floor_bytes = flags.worker_disk_floor_bytes;
  if (!flags.worker_subnet.empty()) {
    if (std::string why = service::SubnetProblem(flags.worker_subnet); !why.empty()) {
      return Status::InvalidArgument("--worker-subnet: " + why);
    }
  }
  o.workers.subnet = flags.worker_subnet;
  o.workers.stop_grace_ms = flags.worker_stop_grace_ms;
  o.workers.boot_timeout_ms = flags.worker_boot_timeout_ms;
  o.workers.max_workers_per_node = flags.worker_max_per_node;
  o.workers.max_workers = flags.worker_max;
  o.workers.memory_budget_bytes = flags.worker_memory_budget_bytes;
  o.workers.pids_budget = flags.worker_pids_budget;
  o.workers.disk_budget_bytes = flags.worker_disk_budget_bytes;
  return o;
}

}  // namespace tpuemu::daemon
