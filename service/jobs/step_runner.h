// StepRunner: one training or inference step of a job — every shard of a data-parallel step on
// the HLO evaluator (the module the compiler lowered the workload's graph to, once per structure:
// CompiledProgram::lowered, engine/frontend/graph_program.h; shards side by side on the job's
// threads), the SGD update (on the threads too), and the step's metrics row (emulated cycles
// including the gradient all-reduce, emulated seconds, flops, MXU utilization, the loss averaged
// over the shards, host time). JobManager's run calls it once per step; tests call it to train a
// workload.
//
// The step's arguments stay resident in the evaluator's arrays from the first step on, as a TPU
// keeps a model in HBM across steps: the workload's values are copied in once (the weights one
// array shared by every shard, each shard its data), the SGD update writes the weights' arrays in
// place from the gradients the step returned, and outputs are copied to tensors only when
// last_outputs() asks. Copying every weight in and every gradient out each step cost a 4x1024
// MLP's step 7% of its host time and a 2048³ matmul's 6% (bench_daemon_jobs, perf).
//
// Ownership: the compiled program (the step's module and price) and the workload are borrowed and
// must outlive the runner; the workload gives the first step its values (the runner keeps the
// trained weights; the workload's stay as built). Not thread-safe: one runner per run, on one
// thread.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "base/status.h"
#include "db/job_repository.h"
#include "engine/frontend/compiler.h"
#include "engine/hardware/hardware.h"
#include "engine/runtime/execute_options.h"
#include "service/workloads/workloads.h"

namespace tpuemu::service {

class StepRunner {
 public:
  // Runs `program`'s lowered module, which must be compiled from the workload's graph (as
  // CompileJob does; INTERNAL when it has no module). `tensorcores`: the TensorCores a step
  // occupies (CompiledJob::tensorcores), the denominator of the MXU utilization. `exec` carries the
  // cancel flag, the deadline, the pool and its fairness group, and the job's threads.
  static Result<std::unique_ptr<StepRunner>> Create(const engine::CompiledProgram& program,
                                                    Workload& workload, const engine::Slice& slice,
                                                    int tensorcores,
                                                    engine::ExecuteOptions exec = {});
  ~StepRunner();

  // Runs step `step` on every shard, applies SGD, and returns the step's row. CANCELLED or
  // DEADLINE_EXCEEDED when the cancel flag or exec's deadline stopped it (inside an instruction,
  // or the SGD update between two chunks); any other evaluator error as is (nothing is applied).
  Result<db::JobStepRow> Run(int64_t step);

  // Shard 0's outputs of the last step that ran (empty before the first), copied out of the
  // evaluator's arrays on the first call after a step.
  const std::map<std::string, engine::Tensor>& last_outputs() const;
  // Emulated cycles of the gradient all-reduce each data-parallel step adds (0 for one shard).
  int64_t allreduce_cycles() const { return allreduce_cycles_; }

 private:
  struct Resident;  // the step's arguments and the last step's outputs (step_runner.cpp)

  StepRunner(const engine::CompiledProgram& program, Workload& workload, const engine::Slice& slice,
             int tensorcores, engine::ExecuteOptions exec);
  // Copies the workload's values into the arguments of every shard (the first step's work);
  // CANCELLED or DEADLINE_EXCEEDED when exec's stop came meanwhile.
  Status MakeResident();

  const engine::CompiledProgram& program_;
  Workload& workload_;
  const int tensorcores_;
  const engine::ExecuteOptions exec_;
  const engine::ParallelContext parallel_;  // exec_'s threads and stop: shards side by side, SGD
  const double clock_hz_;
  const double peak_flops_per_tensorcore_cycle_;
  const int64_t allreduce_cycles_;
  std::unique_ptr<Resident> resident_;                          // from the first step on
  mutable std::map<std::string, engine::Tensor> last_outputs_;  // last_outputs()'s copy
  mutable bool last_outputs_copied_ = true;
};

}  // namespace tpuemu::service
