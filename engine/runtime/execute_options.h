// What a caller hands the engine to run a step on its share of the host: the stop (a cancel
// flag, a deadline), the pool, the fairness group and the thread cap, and the feeds by pointer.
// engine/frontend/graph_program.h runs a job's graph with them; ParallelContextOf turns them into
// the context an op's chunks (and a job's SGD update) run under (engine/runtime/parallel.h).
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <optional>
#include <string>

#include "engine/runtime/parallel.h"
#include "engine/runtime/pool.h"
#include "engine/runtime/tensor.h"

namespace tpuemu::engine {

struct ExecuteOptions {
  const std::atomic<bool>* cancel = nullptr;  // not owned
  std::optional<std::chrono::steady_clock::time_point> deadline;
  Pool* pool = nullptr;               // not owned
  std::string pool_group = "engine";  // fairness key on the pool, e.g. the job id
  int max_threads = 0;                // threads one op may use; 0 = pool threads + 1
};

// The share of the pool and the stop these options give an op's chunks (and any other work done
// on a job's threads, e.g. its SGD update).
inline ParallelContext ParallelContextOf(const ExecuteOptions& options) {
  ParallelContext parallel;
  parallel.pool = options.pool;
  parallel.group = options.pool_group;
  parallel.max_threads = options.max_threads;
  parallel.cancel = {options.cancel, options.deadline};
  return parallel;
}

// Feeds by reference: one tensor per parameter id, owned by the caller (data-parallel shards
// running at once read the same weights through their own views).
using FeedView = std::map<std::string, const Tensor*>;

}  // namespace tpuemu::engine
