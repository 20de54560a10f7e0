// Part (d) of bench_workers: containment of one worker's fork bomb and memory hog, on a tpuemud
// started with --worker-pids-max o.pids_max and --worker-memory-bytes o.memory_bytes (port `port`,
// pid `daemon`, data under `root`). Prints its figures and PASS/FAIL lines (bench_report.h); the
// bomb and the hog run only when every worker's init sits in a cgroup with those limits. Deletes
// its node before it returns.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "bench/workers/bench_report.h"

namespace tpuemu::bench {

void Containment(uint16_t port, pid_t daemon, const Options& o, const std::string& root);

}  // namespace tpuemu::bench
