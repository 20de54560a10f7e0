#include "service/jobs/job_compile.h"

#include <chrono>

#include "service/jobs/job_log_lines.h"
#include "service/observability/transfer_model.h"

namespace tpuemu::service {

using nlohmann::json;

json OpsProfile(const engine::CompiledProgram& program) {
  json ops = json::array();
  for (const engine::OpPlan& p : program.plans) {
    if (p.kind == engine::OpKind::kParameter || p.kind == engine::OpKind::kConstant) continue;
    ops.push_back({{"id", p.id},
                   {"op", engine::OpKindName(p.kind)},
                   {"unit", p.on_mxu ? "mxu" : "vpu"},
                   {"cycles", p.cost.cycles},
                   {"emulatedSeconds", p.cost.seconds},
                   {"flops", p.cost.flops},
                   {"mxuUtilization", p.cost.mxu_utilization},
                   {"hbmBytes", p.cost.hbm_bytes}});
  }
  return ops;
}

Result<CompiledJob> CompileJob(engine::CompileCache& cache, const std::string& job_name,
                               const JobSpec& spec, const Workload& workload,
                               const engine::Slice& slice,
                               const std::optional<SubmitCompile>& at_submit) {
  const bool data_parallel = workload.shards() > 1;
  engine::CompileOptions options;
  options.precision = spec.precision;
  options.tensorcores = data_parallel ? 1 : spec.cores;
  Result<engine::CompileCache::Lookup> lookup =
      cache.GetOrCompile(workload.graph(), slice, options);
  if (!lookup.ok()) return lookup.status();
  CompiledJob out;
  out.lookup = std::move(lookup).value();
  if (out.lookup.hit && at_submit && at_submit->program.lock() == out.lookup.program) {
    out.lookup.hit = false;
    out.lookup.compile_seconds = at_submit->compile_seconds;
  }
  out.tensorcores = data_parallel ? workload.shards() : spec.cores;
  const engine::CompiledProgram& program = out.program();
  out.profile = {{"ops", OpsProfile(program)},
                 {"hbmPeakBytesPerTensorCore", program.peak_hbm_bytes_per_tensorcore}};
  out.log_line =
      CompileLine({.cache_hit = out.lookup.hit,
                   .compile_seconds = out.lookup.compile_seconds,
                   .ops = program.plans.size(),
                   .accelerator_type = slice.type().name,
                   .cores = spec.cores,
                   .hbm_peak_bytes_per_tensorcore = program.peak_hbm_bytes_per_tensorcore});
  const StepTransferBytes transfer = TransferBytesPerStep(workload.graph(), workload.shards());
  out.record = db::JobProgramRow{
      .job = job_name,
      .compile_cache_hit = out.lookup.hit,
      .compile_seconds = out.lookup.compile_seconds,
      .compile_end_unix_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count(),
      .tensorcores = out.tensorcores,
      .hbm_peak_bytes_per_tensorcore = program.peak_hbm_bytes_per_tensorcore,
      .transfer_to_device_bytes_per_step = transfer.to_device,
      .transfer_from_device_bytes_per_step = transfer.from_device};
  return out;
}

}  // namespace tpuemu::service
