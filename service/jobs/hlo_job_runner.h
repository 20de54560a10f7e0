// The run of an hlo job (JobSpec::hlo), which JobRunner::Run calls in place of CompileJob and
// StepRunner: the module priced on the node's slice (engine/hlo/cost_model.h) becomes the job's
// per-op profile, program row and log line (recorded as a compile is); then, unless the job is
// estimate-only, RunModule runs it on the job's devices once per step (the same inputs each
// step), each step's metrics coming from the cost model with that run's execution counts.
//
// The profile ("ops" of .../metrics) has a row per priced instruction: id ("%fusion.12"), op (the
// opcode), opName (metadata op_name), unit (mxu | vpu | ici | none), count (executions per step),
// cycles, emulatedSeconds, flops and hbmBytes per step (count included), mxuUtilization, passes
// and bound. Results: "outputs" (device 0's result, one summary per leaf: out_0, out_1, ...) and
// "metrics" as other jobs have them, plus devices and tensorcores; an estimate-only job has
// "estimate" instead of outputs (cycles, step time, FLOPs, HBM peak per TensorCore against
// capacity, fits) and no steps.
// Errors: CANCELLED when `cancel` stopped the run; RESOURCE_EXHAUSTED when a run would not fit
// the TensorCores' HBM (estimate-only prices it anyway); the engine's and the store's errors.
// Not thread-safe per job: one call per run, on the run's thread.
#pragma once

#include <atomic>
#include <string>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "engine/hardware/hardware.h"
#include "engine/hlo/cost_model.h"
#include "engine/runtime/parallel.h"
#include "service/jobs/job_records.h"
#include "service/jobs/job_spec.h"

namespace tpuemu::service {

struct HloJobEnd {
  nlohmann::json result;
  std::string reason;  // "completed 3 steps", "estimated without running: fits in HBM"
};

// `parallel`: the job's share of the pool (its cores: a dot's or convolution's tiles run on
// that many threads) and its cancel flag.
Result<HloJobEnd> RunHloJob(JobRecords& records, const std::string& name, const JobSpec& spec,
                            const engine::Slice& slice, const engine::ParallelContext& parallel);

// The profile rows of a priced module (the "ops" above).
nlohmann::json HloOpsProfile(const engine::hlo::ModuleCost& cost, const engine::ChipSpec& spec);

}  // namespace tpuemu::service
