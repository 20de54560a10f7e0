// A training step as a job with T cores runs it (service/jobs/step_runner.cpp, issue 27 item 2),
// for bench_workloads: T data-parallel replicas of batch / T side by side, one thread each, on
// their own data and the shared weights, then the mean of their gradients applied to the weights
// (SGD, as service/workloads' ApplySgd) in chunks on the T threads. Each replica's step is the
// graph lowered to HLO and run by the HLO evaluator with its per-instruction profile. Bench only.
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "base/status.h"
#include "bench/engine/raw_gemm.h"
#include "bench/workloads/step_graphs.h"
#include "engine/runtime/pool.h"

namespace tpuemu::bench {

struct ReplicaTiming {
  Timing best;  // the whole step, replicas and update: the best of the measured steps
  // Per entry instruction, the slowest replica's host ns, then the update's as the last entry;
  // each the best over the measured steps.
  std::vector<int64_t> part_ns;
  std::vector<std::string> part_names;  // "name opcode shape" per instruction, then "the update"
};

using StepGraphBuilder = std::function<StepGraph(int64_t batch, std::mt19937_64& rng)>;

// `replicas` replicas of build(batch / replicas) (batch must divide), `steps` steps after a
// warm-up; the pool needs replicas - 1 workers. INVALID_ARGUMENT / the evaluator's errors.
Result<ReplicaTiming> MeasureReplicaStep(const StepGraphBuilder& build, int64_t batch, int replicas,
                                         engine::Pool& pool, int steps);

}  // namespace tpuemu::bench
