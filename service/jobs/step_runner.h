// StepRunner: one training or inference step of a job — every shard of a data-parallel step on
// the executor (side by side on the job's threads), the SGD update (on them too), and the step's
// metrics row (emulated cycles including the gradient all-reduce, emulated seconds, flops, MXU
// utilization, the loss averaged over the shards, host time). JobManager's run calls it once per
// step; tests call it to train a workload.
//
// Ownership: the program and the workload are borrowed and must outlive the runner; the workload
// is updated by every step (its weights). Not thread-safe: one runner per run, on one thread.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "base/status.h"
#include "db/job_repository.h"
#include "engine/compiler.h"
#include "engine/executor.h"
#include "engine/hardware.h"
#include "engine/hlo/graph_program.h"
#include "service/workloads/workloads.h"

namespace tpuemu::service {

class StepRunner {
 public:
  // `tensorcores`: the TensorCores a step occupies (CompiledJob::tensorcores), the denominator
  // of the MXU utilization. `exec` carries the cancel flag, the pool and its fairness group.
  // With `hlo` (the workload's graph lowered, JobExecutor::kHlo) the shards run on the HLO
  // evaluator instead of the native executor; the program still prices the step.
  StepRunner(const engine::CompiledProgram& program, Workload& workload, const engine::Slice& slice,
             int tensorcores, engine::ExecuteOptions exec = {},
             std::shared_ptr<const engine::hlo::HloGraphProgram> hlo = nullptr);

  // Runs step `step` on every shard, applies SGD, and returns the step's row. CANCELLED or
  // DEADLINE_EXCEEDED when the cancel flag or exec's deadline stopped it (inside an op, or the
  // SGD update between two chunks); any other executor error as is (nothing is applied).
  Result<db::JobStepRow> Run(int64_t step);

  // Shard 0's outputs of the last step that ran (empty before the first).
  const std::map<std::string, engine::Tensor>& last_outputs() const { return last_outputs_; }
  // Emulated cycles of the gradient all-reduce each data-parallel step adds (0 for one shard).
  int64_t allreduce_cycles() const { return allreduce_cycles_; }

 private:
  const engine::CompiledProgram& program_;
  Workload& workload_;
  const std::shared_ptr<const engine::hlo::HloGraphProgram> hlo_;
  const int tensorcores_;
  const engine::ExecuteOptions exec_;
  const engine::ParallelContext parallel_;  // exec_'s threads and stop: shards side by side, SGD
  const double clock_hz_;
  const double peak_flops_per_tensorcore_cycle_;
  const int64_t allreduce_cycles_;
  std::map<std::string, engine::Tensor> last_outputs_;
};

}  // namespace tpuemu::service
