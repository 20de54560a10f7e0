// tpuemud: parses the flags, starts the App (daemon/app.h) and runs until SIGINT or SIGTERM.
// Shutdown is bounded by --shutdown-timeout-ms (README "Shutdown"): in-flight requests get half of
// it to drain while running jobs stop and go back to QUEUED; if the whole shutdown is not over
// by then, the process exits anyway (the store's WAL keeps every committed write, and a job left
// RUNNING is re-queued by the next start, as after a crash).
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <thread>

#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include "daemon/app.h"
#include "daemon/flags.h"
#include "db/store.h"
#include "engine/kernels/gemm.h"

namespace {

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
  using namespace tpuemu;  // NOLINT: main is the one place that sees every layer
  CLI::App cli{"tpuemud: a local emulator of Google Cloud TPU VMs (Cloud TPU API v2)"};
  daemon::Flags flags;
  daemon::AddFlags(cli, flags);
  CLI11_PARSE(cli, argc, argv);

  spdlog::set_level(spdlog::level::from_str(flags.log_level));
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
  sigset_t signals = BlockShutdownSignals();
  spdlog::info(
      "This is the Cloud TPU emulator. Implementation may be incomplete or differ from the "
      "real system.");

  Result<daemon::AppOptions> options = daemon::ToAppOptions(flags);
  if (!options.ok()) {
    spdlog::critical("{}", options.status().ToString());
    return 1;
  }
  if (options->auth) {
    spdlog::info("auth on: {} token(s) from {}", options->auth->size(), flags.auth_tokens);
  }
  const std::string db_path = db::Store::Describe(options->db_path), web_dir = options->web_dir;
  Result<std::unique_ptr<daemon::App>> app = daemon::App::Start(std::move(options).value());
  if (!app.ok()) {
    spdlog::critical("{}", app.status().ToString());
    return 1;
  }
  spdlog::info("tpuemud listening on http://{}:{} (store {}, dashboard {})", flags.host,
               (*app)->port(), db_path, web_dir);
  spdlog::info("engine: GEMM kernel {}; host-memory budget {} bytes", engine::GemmKernelName(),
               flags.host_memory_budget_bytes);
  // A line tests and scripts can wait for when --port 0 picks the port.
  std::printf("tpuemud ready on port %u\n", (*app)->port());
  std::fflush(stdout);

  int signal_number = 0;
  sigwait(&signals, &signal_number);
  const std::chrono::milliseconds bound(flags.shutdown_timeout_ms);
  spdlog::info(
      "signal {}: shutting down within {} ms (finishing in-flight requests, re-queueing "
      "running jobs)",
      signal_number, bound.count());
  std::mutex mu;
  std::condition_variable cv;
  bool stopped = false;
  std::thread watchdog([&] {
    std::unique_lock lock(mu);
    if (cv.wait_for(lock, bound, [&] { return stopped; })) return;
    spdlog::error("shutdown did not finish within {} ms (--shutdown-timeout-ms); exiting now",
                  bound.count());
    spdlog::shutdown();
    std::_Exit(1);
  });
  const auto started = std::chrono::steady_clock::now();
  Status closed = (*app)->Stop(bound / 2);
  {
    std::lock_guard lock(mu);
    stopped = true;
  }
  cv.notify_all();
  watchdog.join();
  if (!closed.ok()) spdlog::error("closing the store: {}", closed.ToString());
  spdlog::info("bye (shutdown took {} ms)", std::chrono::duration_cast<std::chrono::milliseconds>(
                                                std::chrono::steady_clock::now() - started)
                                                .count());
  return 0;
}
