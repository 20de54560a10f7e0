// Host memory of jobs: what one job holds at its peak (planned from its compiled program before it
// runs) and the daemon-wide budget that jobs reserve before they start (README "Host memory").
//
// JobHostBytes is an upper bound: the generated values of every shard (weights and data, counted
// as the graph's parameters once per shard), the peak of each shard's step (the HLO evaluator's
// liveness sweep over the program's lowered module, engine/hlo/host_memory.h: its copies of the
// feeds, live arrays and kernel scratch; the shards run side by side, service/jobs/step_runner.h)
// and the outputs kept per shard until the SGD update plus the previous step's. Per-process
// caches are not in it (the documented overhead).
// HostMemoryBudget is the admission ledger: JobManager reserves a job's bytes before it starts it
// and releases them when its run ends; a job that does not fit stays QUEUED. It never blocks (the
// manager keeps waiting jobs in their queues, so no pool thread waits). Thread-safe.
#pragma once

#include <cstdint>
#include <mutex>

#include "engine/frontend/compiler.h"
#include "engine/frontend/ir.h"

namespace tpuemu::service {

// What the daemon may hold beyond the budget with `engine_threads` pool threads (README "Host
// memory"): per-process caches that no job's plan counts — freed buffers kept for reuse (512 MiB,
// engine/runtime/buffer_cache.h), materialised parameter inits (256 MiB,
// engine/frontend/init_cache.h), the GEMM operand planes each thread keeps (256 MiB each,
// engine/kernels/gemm_operands.cpp) — plus 64 MiB for oneDNN's primitives and the allocator's
// slack.
constexpr int64_t HostMemoryOverheadBytes(int engine_threads) {
  return (int64_t{512 + 256 + 64} + int64_t{256} * engine_threads) << 20;
}

// Peak host bytes of a job running `program` (compiled from `graph`) on `shards` shards.
int64_t JobHostBytes(const engine::CompiledProgram& program, const engine::Graph& graph,
                     int shards);

// Half of MemTotal in /proc/meminfo (the daemon's default --host-memory-budget-bytes), or 4 GiB
// when it cannot be read.
int64_t DefaultHostMemoryBudgetBytes();

class HostMemoryBudget {
 public:
  // budget_bytes <= 0: unlimited (every reservation succeeds).
  explicit HostMemoryBudget(int64_t budget_bytes) : budget_(budget_bytes) {}

  // Reserves `bytes` (clamped to the budget, so a job larger than the whole budget still runs
  // alone) if they fit beside what is reserved; false otherwise (nothing changes).
  bool TryReserve(int64_t bytes);
  // Returns a reservation: `bytes` as passed to a TryReserve that succeeded.
  void Release(int64_t bytes);

  int64_t budget_bytes() const { return budget_; }
  int64_t reserved_bytes() const;

 private:
  int64_t Clamp(int64_t bytes) const;

  const int64_t budget_;
  mutable std::mutex mu_;
  int64_t reserved_ = 0;  // guarded by mu_
};

}  // namespace tpuemu::service
