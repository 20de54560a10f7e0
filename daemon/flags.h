// tpuemud's command line: every flag with its TPUEMU_* environment variable (CLI11), and the
// AppOptions they become.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "base/status.h"
#include "daemon/app.h"
#include "service/jobs/host_memory_budget.h"

namespace CLI {
class App;
}

namespace tpuemu::daemon {

struct Flags {
  std::string host = "127.0.0.1";
  int port = 8470;
  std::string data_dir = "data";
  std::string db_path;  // default: <data_dir>/tpuemu.db
  int64_t provisioning_delay_ms = 1000;
  int64_t transition_delay_ms = 500;
  int64_t max_write_lag_ms = 50;
  int64_t zone_capacity_tensorcores = 65536;
  int64_t maintenance_duration_ms = 30000;
  std::string replica_id;  // empty: host:port on PostgreSQL, "local" on SQLite
  int64_t replica_heartbeat_ms = 1000;
  int64_t replica_lease_ms = 5000;
  double preemption_rate_per_hour = 0;
  uint64_t fault_seed = 1;
  std::string log_level = "info";
  int io_threads = 2;
  int writer_threads = 32;
  std::size_t body_limit_bytes = 1 << 20;
  std::size_t header_limit_bytes = 16 << 10;
  int64_t read_timeout_ms = 30000;
  int64_t idle_timeout_ms = 60000;
  int max_connections = 1024;
  int64_t max_job_seconds = 86400;
  int64_t max_job_host_memory_bytes = 0;  // 0: only the budget limits a job
  int64_t host_memory_budget_bytes = service::DefaultHostMemoryBudgetBytes();
  int64_t shutdown_timeout_ms = 10000;
  int64_t max_hlo_text_bytes = 768 << 10;
  int64_t max_hlo_instructions = 100'000;
  int64_t project_quota_tensorcores = 0;
  std::string auth_tokens;
  int64_t utilization_interval_ms = 10000;
  int64_t utilization_retention_seconds = 86400;
  int64_t events_retention_seconds = 7 * 86400;
  int64_t events_max = 100000;
  int64_t jobs_retention_seconds = 7 * 86400;
  int64_t job_logs_retention_seconds = 7 * 86400;
  int64_t job_steps_retention_seconds = 7 * 86400;
  int64_t operations_retention_seconds = 7 * 86400;
  int64_t retention_interval_ms = 60000;
  std::string worker_sandboxes = "auto";  // auto | off
  std::string workers_dir;                // default: <data_dir>/workers
  std::string sandbox_helper;             // default: tpuemu-sandbox next to tpuemud
  int worker_ssh_port = 22;
  int64_t worker_memory_bytes = int64_t{4} << 30;
  int64_t worker_pids_max = 4096;
  int64_t worker_disk_bytes = int64_t{100} << 30;      // a Cloud TPU VM's boot disk: 100 GiB
  int64_t worker_disk_floor_bytes = int64_t{1} << 30;  // host free space kept for the store
  std::string worker_subnet;  // "" = 10.<n>.0.0/16 (n: this tpuemud's loopback /16)
  int64_t worker_stop_grace_ms = 10000;
  int64_t worker_boot_timeout_ms = 60000;
  int worker_max_per_node = 32;
  int worker_max = 1024;
  int64_t worker_memory_budget_bytes = -1;  // -1: MemTotal
  int64_t worker_pids_budget = -1;          // -1: 3/4 of min(pid_max, threads-max)
  int64_t worker_disk_budget_bytes = 0;     // 0: none (boot disks are sparse)
  std::string web_dir;                      // default: DefaultWebDir()
  std::string chartjs_dir = "/usr/share/javascript/chart.js";
  std::string xterm_dir = "/usr/share/javascript/xterm";
  std::string xterm_lib_dir = "/usr/share/nodejs/xterm/lib";
  int max_terminals = 32;
  int max_terminals_per_worker = 4;
};

// Registers every flag on `cli`, writing into `flags`.
void AddFlags(CLI::App& cli, Flags& flags);

// The AppOptions the flags describe (reads --auth-tokens: INVALID_ARGUMENT / NOT_FOUND naming it).
Result<AppOptions> ToAppOptions(const Flags& flags);

// The SQLite path the flags select: --db, else <data-dir>/tpuemu.db.
std::string DbPath(const Flags& flags);

}  // namespace tpuemu::daemon
