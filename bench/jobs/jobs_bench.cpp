// bench_jobs: starts tpuemud (no provisioning delay), creates one v4-8 node per client, then every
// client thread submits tiny matmul jobs (8x8x8, 1 step) on its node as fast as it can, and finally
// waits for each job to be terminal and checks its metrics are stored (one step row and the one-op
// profile). It does so on the store asked for, then on the other one as the same run's baseline.
// Prints jobs/s (submit of the first job to the last job's metrics read back), the submit latency
// p50/p99, the ratio to the baseline and PASS/MISS against the target (file: >= 600 jobs/s, issue
// 44; memory: >= 500). Usage: bench_jobs [clients=4] [jobs_per_client=500] [memory|file]
// ("file": a SQLite file in a fresh temp dir, WAL, the durable default; "memory": --db :memory:).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "bench/cpu_model.h"
#include "tests/e2e/daemon_process.h"
#include "tests/support/http_client.h"

using tpuemu::testing::ClientResponse;
using tpuemu::testing::DaemonProcess;
using tpuemu::testing::HttpClient;
using Clock = std::chrono::steady_clock;

namespace {

struct RunFigures {
  bool started = false;
  int failed = 0;
  double seconds = 0;
  double p50_ms = 0;
  double p99_ms = 0;
};

// One tpuemud on `file` (a durable SQLite file) or --db :memory:, `clients` threads of
// `per_client` jobs each.
RunFigures RunOnce(int clients, int per_client, bool file) {
  RunFigures f;
  const std::string dir = "/tmp/tpuemu-bench-jobs-" + std::to_string(::getpid());
  std::vector<std::string> args{"--port",
                                "0",
                                "--log-level",
                                "warn",
                                "--provisioning-delay-ms",
                                "0",
                                "--transition-delay-ms",
                                "0",
                                "--worker-sandboxes",
                                "off"};
  if (file) {
    args.insert(args.end(), {"--data-dir", dir});
  } else {
    args.insert(args.end(), {"--db", ":memory:"});
  }
  DaemonProcess daemon;
  if (!daemon.Start(args)) {
    std::fprintf(stderr, "tpuemud did not start\n");
    return f;
  }
  const std::string parent = "/v2/projects/bench/locations/us-central2-b";
  {
    HttpClient c("127.0.0.1", daemon.port());
    for (int i = 0; i < clients; ++i) {
      auto r = c.Request("POST", parent + "/nodes?nodeId=n" + std::to_string(i),
                         R"({"acceleratorType":"v4-8","runtimeVersion":"tpu-ubuntu2204-base"})");
      if (!r.ok() || r->status != 200) return f;
    }
    for (int i = 0; i < clients; ++i) {
      for (;;) {
        auto r = c.Request("GET", parent + "/nodes/n" + std::to_string(i));
        if (r.ok() && r->Json().value("state", "") == "READY") break;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
    }
  }
  std::vector<std::vector<double>> latencies(static_cast<size_t>(clients));
  std::vector<int> failures(static_cast<size_t>(clients), 0);
  const auto t0 = Clock::now();
  std::vector<std::thread> threads;
  for (int i = 0; i < clients; ++i) {
    threads.emplace_back([&, i] {
      HttpClient c("127.0.0.1", daemon.port(), std::chrono::seconds(60));
      const std::string jobs = parent + "/nodes/n" + std::to_string(i) + "/jobs";
      std::vector<std::string> names;
      for (int j = 0; j < per_client; ++j) {
        const auto s = Clock::now();
        auto r = c.Request("POST", jobs, R"({"workload": {"matmul": {"m": 8, "n": 8, "k": 8}}})");
        latencies[static_cast<size_t>(i)].push_back(
            std::chrono::duration<double, std::milli>(Clock::now() - s).count());
        if (!r.ok() || r->status != 200) {
          ++failures[static_cast<size_t>(i)];
          continue;
        }
        names.push_back(r->Json()["name"]);
      }
      for (const std::string& name : names) {
        auto w = c.Request("GET", "/v2/" + name + ":wait?timeout=60s");
        auto m = c.Request("GET", "/v2/" + name + "/metrics");
        if (!w.ok() || w->Json().value("state", "") != "SUCCEEDED" || !m.ok() ||
            m->Json()["steps"].size() != 1 || m->Json()["ops"].size() != 1) {
          ++failures[static_cast<size_t>(i)];
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  std::vector<double> all;
  int failed = 0;
  for (int i = 0; i < clients; ++i) {
    all.insert(all.end(), latencies[static_cast<size_t>(i)].begin(),
               latencies[static_cast<size_t>(i)].end());
    failed += failures[static_cast<size_t>(i)];
  }
  std::sort(all.begin(), all.end());
  auto pct = [&](double p) {
    return all.empty() ? 0.0 : all[static_cast<size_t>(p * (all.size() - 1))];
  };
  f.started = true;
  f.failed = failed;
  f.seconds = seconds;
  f.p50_ms = pct(0.50);
  f.p99_ms = pct(0.99);
  daemon.Kill(SIGTERM);
  if (file) std::filesystem::remove_all(dir);
  return f;
}

}  // namespace

// The store asked for, then the other one as the same run's baseline: a durable file against
// --db :memory: (what the file's commits cost), or the reverse.
int main(int argc, char** argv) {
  const int clients = argc > 1 ? std::atoi(argv[1]) : 4;
  const int per_client = argc > 2 ? std::atoi(argv[2]) : 500;
  const bool file = argc > 3 && std::string(argv[3]) == "file";
  const int total = clients * per_client;
  std::printf("CPU: %s\n", tpuemu::bench::CpuModel().c_str());
  double rate[2] = {0, 0};
  int failed = 0;
  for (int run = 0; run < 2; ++run) {
    const bool on_file = run == 0 ? file : !file;
    const RunFigures f = RunOnce(clients, per_client, on_file);
    if (!f.started) {
      std::fprintf(stderr, "tpuemud did not start or its nodes were refused\n");
      return 1;
    }
    rate[run] = total / f.seconds;
    failed += f.failed;
    std::printf(
        "store=%-6s clients=%d jobs=%d failed=%d wall=%.2fs jobs/s=%.0f submit p50=%.2f ms "
        "p99=%.2f ms%s\n",
        on_file ? "file" : "memory", clients, total, f.failed, f.seconds, rate[run], f.p50_ms,
        f.p99_ms, run == 0 ? "" : "  (baseline, same run)");
  }
  std::printf("jobs/s (submit -> terminal -> metrics stored): %.0f\n", rate[0]);
  std::printf("ratio %s/%s = %.2f\n", file ? "file" : "memory", file ? "memory" : "file",
              rate[1] > 0 ? rate[0] / rate[1] : 0.0);
  std::printf("target >= %d jobs/s: %s\n", file ? 600 : 500,
              rate[0] >= (file ? 600 : 500) ? "PASS" : "MISS");
  return failed == 0 ? 0 : 2;
}
