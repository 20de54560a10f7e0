// bench_workers: TPU VM workers as Linux sandboxes (service/workers/, sandbox/) behind a real
// tpuemud run as root with --worker-sandboxes auto, delays 0, a temp --data-dir. Prints, with the
// CPU model:
//  (a) create -> READY of one v4-32 (4 workers) and of one v4-8, median of --runs, beside the same
//      on a tpuemud with --worker-sandboxes off started in the same run (the baseline, ratio);
//  (b) --nodes v4-32 nodes created at once: the time until every one is READY, nodes/s;
//  (c) those nodes idle: VmRSS and Pss summed over every tpuemu-sandbox process of the run, and
//      tpuemud's own RSS growth, in all and per worker (aim: under 1 GiB in all);
//  (d) containment, on a third tpuemud with --worker-pids-max and --worker-memory-bytes small: in
//      worker 0 of a v4-32, over ssh, a fork bomb (killed by timeout) and an 8 GiB memory hog;
//      tpuemud's GET latency meanwhile against before, the hog's exit code, the worker's process
//      count against pids-max, and whether the other workers still answer ssh.
// After (c) and (d) every node is deleted and no tpuemu-sandbox process of the run may be left.
// Skips (exit 0) when not root or when a node says workerSandbox.enabled=false (with the reason).
// Exit 2 when a check failed, 1 on a setup failure. Every wait has a deadline; the temp dir is
// removed at the end.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "bench/cpu_model.h"
#include "bench/store_load.h"
#include "bench/workers/bench_report.h"
#include "bench/workers/containment.h"
#include "bench/workers/node_api.h"
#include "bench/workers/sandbox_procs.h"
#include "tests/e2e/daemon_process.h"

namespace {

using tpuemu::bench::Check;
using tpuemu::bench::kWorkersPerV432;
using tpuemu::bench::MiB;
using tpuemu::bench::NodeApi;
using tpuemu::bench::NotRunning;
using tpuemu::bench::Options;
using tpuemu::bench::Pct;
using tpuemu::bench::Seconds;
using tpuemu::bench::WaitNoSandboxes;
using tpuemu::testing::DaemonProcess;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr int kCreateClients = 10;

Options Parse(int argc, char** argv) {
  Options o;
  CLI::App app{"bench_workers: TPU VM worker sandboxes behind a real tpuemud (needs root)"};
  app.add_option("--runs", o.runs, "creates per type for the median time to READY")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  app.add_option("--nodes", o.nodes, "v4-32 nodes created at once (4 workers each)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  app.add_option("--pids-max", o.pids_max, "--worker-pids-max of the containment run")
      ->check(CLI::Range(int64_t{32}, int64_t{4096}))
      ->capture_default_str();
  app.add_option("--memory-bytes", o.memory_bytes, "--worker-memory-bytes of the containment run")
      ->check(CLI::Range(int64_t{64} << 20, int64_t{4} << 30))
      ->capture_default_str();
  app.add_option("--gets", o.gets, "GETs of a node before and during the containment load")
      ->check(CLI::Range(10, 100000))
      ->capture_default_str();
  app.add_option("--get-interval-ms", o.get_interval_ms, "pause between those GETs")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  app.add_option("--bomb-seconds", o.bomb_seconds, "the fork bomb's timeout")
      ->check(CLI::Range(2, 120))
      ->capture_default_str();
  app.add_option("--timeout-s", o.timeout_s, "longest wait for READY (per node, or for all)")
      ->check(CLI::Range(10, 3600))
      ->capture_default_str();
  app.add_option("--worker-ssh-port", o.ssh_port,
                 "tpuemud's --worker-ssh-port; 0 = a free port (port 22 of a worker address may be "
                 "held by another tpuemud on this machine, whose nodes get the same addresses)")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    std::exit(app.exit(e));
  }
  return o;
}

// A TCP port free on loopback now (the kernel's pick), 2222 if none could be had.
int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  int port = 2222;
  if (fd >= 0 && bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  if (fd >= 0) close(fd);
  return port;
}

std::vector<std::string> SandboxFlags(const Options& o, bool containment) {
  std::vector<std::string> f = {"--worker-ssh-port",
                                std::to_string(o.ssh_port),
                                "--worker-sandboxes",
                                "auto",
                                "--worker-stop-grace-ms",
                                "2000",
                                "--worker-boot-timeout-ms",
                                std::to_string(o.timeout_s * 1000),
                                "--worker-max",
                                std::to_string(std::max(1024, o.nodes * kWorkersPerV432 + 8))};
  // (b) boots --nodes v4-32 at once whatever this host's RAM and pids would allow (the budgets'
  // own figures: bench_worker_capacity).
  f.insert(f.end(), {"--worker-memory-budget-bytes", "0", "--worker-pids-budget", "0"});
  if (containment) {
    f.insert(f.end(), {"--worker-pids-max", std::to_string(o.pids_max), "--worker-memory-bytes",
                       std::to_string(o.memory_bytes)});
  }
  return f;
}

bool Start(DaemonProcess& d, const std::string& dir, const std::vector<std::string>& extra) {
  std::filesystem::create_directories(dir);
  if (d.Start(tpuemu::testing::TestDaemonArgs({"--data-dir", dir}, extra))) return true;
  std::fprintf(stderr, "bench_workers: tpuemud did not start (data dir %s)\n", dir.c_str());
  return false;
}

// (a): `runs` creates of `type` one after another, each deleted before the next: seconds from
// the create to READY. Negative entries: never READY within the timeout.
std::vector<double> ReadyTimes(NodeApi& api, const Options& o, const std::string& type,
                               const std::string& prefix, bool sandboxed) {
  std::vector<double> out;
  int not_running = 0;
  for (int i = 0; i < o.runs; ++i) {
    const std::string id = prefix + std::to_string(i);
    const auto t0 = Clock::now();
    if (!api.Create(id, type)) {
      out.push_back(-1);
      continue;
    }
    const bool ready = api.WaitState(id, "READY", t0 + seconds(o.timeout_s));
    out.push_back(ready ? Seconds(Clock::now() - t0) : -1);
    if (sandboxed) not_running += NotRunning(api, id);
    api.Delete(id);
    api.WaitState(id, "GONE", Clock::now() + seconds(60), milliseconds(10));
  }
  if (sandboxed) Check(not_running == 0, type + ": every worker RUNNING at READY");
  return out;
}

void PrintReady(const char* label, const std::vector<double>& t) {
  const bool all = std::none_of(t.begin(), t.end(), [](double s) { return s < 0; });
  std::printf("  %-30s median %7.3f s  min %8.3f  max %8.3f%s\n", label, Pct(t, 0.5),
              *std::min_element(t.begin(), t.end()), *std::max_element(t.begin(), t.end()),
              all ? "" : "  (some never READY)");
}

// (b) and (c) on the sandboxed tpuemud; deletes every node at the end.
void ManyNodes(const DaemonProcess& d, const Options& o, const std::string& root) {
  const pid_t daemon = d.pid();
  std::vector<std::string> ids;
  for (int i = 0; i < o.nodes; ++i) ids.push_back("m" + std::to_string(i));
  const int64_t rss_before_kb = tpuemu::bench::RssKb(daemon);
  std::atomic<int> create_failed{0};
  const auto t0 = Clock::now();
  const double create_s = tpuemu::bench::OnClients(kCreateClients, [&](int c) {
    NodeApi api(d.port());
    for (size_t i = c; i < ids.size(); i += kCreateClients) {
      if (!api.Create(ids[i], "v4-32")) ++create_failed;
    }
  });
  NodeApi api(d.port());
  std::set<std::string> pending(ids.begin(), ids.end());
  std::vector<double> ready_at;
  while (!pending.empty() && Clock::now() < t0 + seconds(o.timeout_s)) {
    for (auto it = pending.begin(); it != pending.end();) {
      if (api.State(*it) == "READY") {
        ready_at.push_back(Seconds(Clock::now() - t0));
        it = pending.erase(it);
      } else {
        ++it;
      }
    }
    std::this_thread::sleep_for(milliseconds(10));
  }
  const double all_s = Seconds(Clock::now() - t0);
  int not_running = 0;
  for (const std::string& id : ids) not_running += NotRunning(api, id);
  const int workers = o.nodes * kWorkersPerV432;
  std::printf("(b) %d v4-32 nodes (%d workers) created at once by %d clients\n", o.nodes, workers,
              kCreateClients);
  std::printf("  creates acknowledged in %.3f s (%d failed)\n", create_s, create_failed.load());
  std::printf("  all READY after %.2f s = %.1f nodes/s, %.1f workers/s (node READY p50 %.2f s)\n",
              all_s, o.nodes / all_s, workers / all_s, Pct(ready_at, 0.5));
  const std::vector<double> boot_ms = api.BootMs("m");
  std::printf(
      "  worker boot (tpuemud's events, %zu workers): p50 %.0f ms  p99 %.0f ms  max %.0f ms\n",
      boot_ms.size(), Pct(boot_ms, 0.5), Pct(boot_ms, 0.99), Pct(boot_ms, 1));
  Check(pending.empty() && create_failed == 0, "every node READY");
  Check(not_running == 0, "every worker RUNNING");

  // (c) Idle: a few seconds for the boot's transient processes (ssh probes) to end.
  std::this_thread::sleep_for(seconds(3));
  const std::vector<pid_t> pids = tpuemu::bench::SandboxPids(root, daemon);
  const tpuemu::bench::MemoryFigures m = tpuemu::bench::SumMemory(pids);
  int boots = 0;
  for (pid_t p : pids) boots += tpuemu::bench::CommandLine(p).find(" boot ") != std::string::npos;
  int64_t cgroup_bytes = 0;
  for (const std::string& id : ids) {
    for (const auto& w : api.Workers(id)) cgroup_bytes += w.value("memoryBytes", int64_t{0});
  }
  const int64_t rss_after_kb = tpuemu::bench::RssKb(daemon);
  const int64_t growth_kb = rss_after_kb - rss_before_kb;
  std::printf("(c) %d idle v4-32 nodes, %d workers: %d tpuemu-sandbox processes (%d boot/init)\n",
              o.nodes, workers, m.processes, boots);
  std::printf("  sum VmRSS %9.1f MiB = %6.1f KiB per worker\n", MiB(m.rss_kb),
              static_cast<double>(m.rss_kb) / workers);
  std::printf("  sum Pss   %9.1f MiB = %6.1f KiB per worker\n", MiB(m.pss_kb),
              static_cast<double>(m.pss_kb) / workers);
  std::printf("  tpuemud RSS %.1f -> %.1f MiB (+%.1f MiB = %.1f KiB per worker)\n",
              MiB(rss_before_kb), MiB(rss_after_kb), MiB(growth_kb),
              static_cast<double>(growth_kb) / workers);
  std::printf("  workers' cgroup memory (memoryBytes, page cache included): %.1f MiB\n",
              static_cast<double>(cgroup_bytes) / (1 << 20));
  const double in_all_mib = MiB(m.rss_kb + growth_kb);
  std::printf("  in all (VmRSS sum + tpuemud growth): %.1f MiB; with Pss: %.1f MiB\n", in_all_mib,
              MiB(m.pss_kb + growth_kb));
  Check(in_all_mib < 1024, "under 1 GiB in all (VmRSS sum + tpuemud growth)");

  const auto td = Clock::now();
  tpuemu::bench::OnClients(kCreateClients, [&](int c) {
    NodeApi a(d.port());
    for (size_t i = c; i < ids.size(); i += kCreateClients) a.Delete(ids[i]);
    for (size_t i = c; i < ids.size(); i += kCreateClients) {
      a.WaitState(ids[i], "GONE", td + seconds(120), milliseconds(20));
    }
  });
  const int left = WaitNoSandboxes(root, daemon, seconds(60));
  std::printf("  deleted all %d nodes; sandbox processes gone %.2f s after the deletes began\n",
              o.nodes, Seconds(Clock::now() - td));
  Check(left == 0, "no tpuemu-sandbox process left after deleting all nodes");
}

}  // namespace

int main(int argc, char** argv) {
  Options o = Parse(argc, argv);
  std::printf("CPU: %s\n", tpuemu::bench::CpuModel().c_str());
  if (geteuid() != 0) {
    std::printf("bench_workers: skipped: worker sandboxes need root (run as root)\n");
    return 0;
  }
  char tmpl[] = "/tmp/tpuemu-bench-workers-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) {
    std::perror("mkdtemp");
    return 1;
  }
  const std::string root = tmpl;
  if (o.ssh_port == 0) o.ssh_port = FreePort();
  std::printf("workers answer SSH on port %d of their own loopback addresses\n", o.ssh_port);
  // Before our tpuemud starts, every tpuemu-sandbox process is another run's.
  if (const size_t foreign = tpuemu::bench::SandboxPids("tpuemu-sandbox", 0).size()) {
    std::printf(
        "note: %zu tpuemu-sandbox processes of another tpuemud run on this machine; its "
        "workers may hold the same addresses (port 80) and CPU\n",
        foreign);
  }
  int rc = 0;
  {
    // The sandboxed tpuemud first: if this host cannot run sandboxes, nothing else is worth it.
    DaemonProcess sandboxed;
    if (!Start(sandboxed, root + "/auto", SandboxFlags(o, false))) {
      rc = 1;
    } else {
      NodeApi api(sandboxed.port());
      const auto t0 = Clock::now();
      const bool ready =
          api.Create("probe", "v4-8") && api.WaitState("probe", "READY", t0 + seconds(o.timeout_s));
      const nlohmann::json probe = api.Get("probe");
      const nlohmann::json sandbox = probe.is_object()
                                         ? probe.value("workerSandbox", nlohmann::json::object())
                                         : nlohmann::json::object();
      if (!ready) {
        std::fprintf(stderr, "bench_workers: the probe node never became READY\n");
        rc = 1;
      } else if (!sandbox.value("enabled", false)) {
        std::printf("bench_workers: skipped: workerSandbox.enabled is false (%s)\n",
                    sandbox.value("reason", std::string("no reason given")).c_str());
      } else {
        api.Delete("probe");
        api.WaitState("probe", "GONE", Clock::now() + seconds(60), milliseconds(10));
        std::printf(
            "(a) create -> READY, median of %d (delays 0; each node deleted before the "
            "next)\n",
            o.runs);
        const std::vector<double> s32 = ReadyTimes(api, o, "v4-32", "a32-", true);
        const std::vector<double> s8 = ReadyTimes(api, o, "v4-8", "a8-", true);
        std::vector<double> off32, off8;
        {
          DaemonProcess off;
          if (Start(off, root + "/off", {"--worker-sandboxes", "off"})) {
            NodeApi off_api(off.port());
            off32 = ReadyTimes(off_api, o, "v4-32", "b32-", false);
            off8 = ReadyTimes(off_api, o, "v4-8", "b8-", false);
            off.Kill(SIGTERM);
          }
        }
        PrintReady("v4-32 (4 sandboxes)", s32);
        PrintReady("v4-8 (1 sandbox)", s8);
        const std::vector<double> boot32 = api.BootMs("a32-"), boot8 = api.BootMs("a8-");
        std::printf(
            "  worker boot (tpuemud's events): v4-32 p50 %.0f ms max %.0f ms; v4-8 p50 %.0f "
            "ms max %.0f ms\n",
            Pct(boot32, 0.5), Pct(boot32, 1), Pct(boot8, 0.5), Pct(boot8, 1));
        if (!off32.empty() && !off8.empty()) {
          PrintReady("v4-32 --worker-sandboxes off", off32);
          PrintReady("v4-8 --worker-sandboxes off", off8);
          std::printf("  ratio sandboxes/off: v4-32 %.0fx  v4-8 %.0fx\n",
                      Pct(s32, 0.5) / Pct(off32, 0.5), Pct(s8, 0.5) / Pct(off8, 0.5));
        } else {
          Check(false, "the baseline tpuemud (--worker-sandboxes off) started");
        }
        ManyNodes(sandboxed, o, root);
        const int exit_code = sandboxed.Kill(SIGTERM);
        if (exit_code != 0) std::printf("  tpuemud exited %d after SIGTERM\n", exit_code);

        DaemonProcess limited;
        if (Start(limited, root + "/limits", SandboxFlags(o, true))) {
          tpuemu::bench::Containment(limited.port(), limited.pid(), o, root);
          limited.Kill(SIGTERM);
        } else {
          rc = 1;
        }
        std::printf("checks failed: %d\n", tpuemu::bench::ChecksFailed());
        if (tpuemu::bench::ChecksFailed() > 0 && rc == 0) rc = 2;
      }
    }
  }
  std::error_code ec;
  std::filesystem::remove_all(root, ec);
  if (ec)
    std::printf("bench_workers: could not remove %s: %s\n", root.c_str(), ec.message().c_str());
  return rc;
}
