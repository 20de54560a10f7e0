// What the parts of bench_workers share: its options, the percentiles and PASS/FAIL lines it
// prints, and the checks on workers it makes more than once. Header-only.
#pragma once

#include <sys/types.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "bench/workers/node_api.h"
#include "bench/workers/sandbox_procs.h"

namespace tpuemu::bench {

constexpr int kWorkersPerV432 = 4;

// bench_workers' flags (workers_bench.cpp's Parse says what each one does).
struct Options {
  int runs = 5;                      // (a) creates per type
  int nodes = 100;                   // (b), (c) v4-32 nodes at once
  int64_t pids_max = 256;            // (d) --worker-pids-max
  int64_t memory_bytes = 268435456;  // (d) --worker-memory-bytes
  int gets = 200;                    // (d) GETs before, and during the load
  int get_interval_ms = 25;          // (d) pause between them
  int bomb_seconds = 15;             // (d) the fork bomb's timeout
  int timeout_s = 300;               // longest wait for READY
  int ssh_port = 0;                  // --worker-ssh-port; 0: a free port picked at start
};

inline double Pct(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(p * static_cast<double>(v.size() - 1))];
}

inline double MiB(int64_t kb) { return static_cast<double>(kb) / 1024.0; }

// Checks that printed FAIL so far (the exit code).
inline int& ChecksFailed() {
  static int failed = 0;
  return failed;
}

inline void Check(bool ok, const std::string& what) {
  std::printf("  check: %-58s %s\n", what.c_str(), ok ? "PASS" : "FAIL");
  if (!ok) ++ChecksFailed();
}

// Workers of node `id` whose state is not RUNNING; prints the first error seen in the run.
inline int NotRunning(NodeApi& api, const std::string& id) {
  static bool printed = false;
  int n = 0;
  for (const auto& w : api.Workers(id)) {
    if (w.value("state", "") == "RUNNING") continue;
    ++n;
    if (!printed) {
      printed = true;
      std::printf("  (worker %d of %s: %s: %s)\n", w.value("workerId", -1), id.c_str(),
                  w.value("state", std::string("?")).c_str(),
                  w.value("error", std::string("")).c_str());
    }
  }
  return n;
}

// Waits until no tpuemu-sandbox process of the run is left; the count left at the deadline.
inline int WaitNoSandboxes(const std::string& root, pid_t daemon,
                           std::chrono::steady_clock::duration patience) {
  const auto deadline = std::chrono::steady_clock::now() + patience;
  for (;;) {
    const int left = static_cast<int>(SandboxPids(root, daemon).size());
    if (left == 0 || std::chrono::steady_clock::now() >= deadline) return left;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace tpuemu::bench
