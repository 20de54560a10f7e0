// Submit's host-memory checks (job_admission.h).
#include "service/jobs/job_admission.h"

#include <string>

#include "engine/hlo/host_memory.h"
#include "service/jobs/host_memory_budget.h"
#include "service/workloads/workloads.h"

namespace tpuemu::service {

Status CheckJobHostBytes(int64_t host_bytes, const JobLimits& limits) {
  const int64_t per_job = limits.max_job_host_memory_bytes;
  const int64_t budget = limits.host_memory_budget_bytes;
  // A job larger than the whole budget could never start: the same answer as the per-job limit.
  const bool by_flag = per_job > 0 && (budget <= 0 || per_job <= budget);
  const int64_t limit = by_flag ? per_job : budget;
  if (limit <= 0 || host_bytes <= limit) return Status::Ok();
  return Status::InvalidArgument(
      "the job needs " + std::to_string(host_bytes) +
      " bytes of host memory at its peak (planned from its compiled program), more than the " +
      std::to_string(limit) + " bytes " +
      (by_flag ? "one job may use (--max-job-host-memory-bytes)"
               : "of the daemon's host-memory budget (--host-memory-budget-bytes)") +
      "; use a smaller batch, fewer or narrower layers, or fewer cores");
}

int64_t PlanJobHostBytes(engine::CompileCache& cache, const JobLimits& limits, const JobSpec& spec,
                         const Node& node, std::optional<SubmitCompile>* compile) {
  if (limits.max_job_host_memory_bytes <= 0 && limits.host_memory_budget_bytes <= 0) return 0;
  // An hlo job: the evaluator's own liveness sweep over the parsed module (engine/hlo/
  // host_memory.h); an estimate-only one holds no value.
  if (spec.hlo) {
    if (spec.hlo->estimate_only) return 0;
    return engine::hlo::PeakHostBytes(*spec.hlo->module, spec.precision);
  }
  Result<Workload> workload = Workload::BuildGraphOnly(spec);
  if (!workload.ok()) return 0;
  // The run compiles the same graph for the same slice: a cache hit then.
  Result<CompiledJob> compiled =
      CompileJob(cache, /*job_name=*/"", spec, *workload, engine::Slice(node.type));
  if (!compiled.ok()) return 0;
  if (!compiled->lookup.hit) {
    *compile = SubmitCompile{.program = compiled->lookup.program,
                             .compile_seconds = compiled->lookup.compile_seconds};
  }
  return JobHostBytes(compiled->program(), workload->graph(), workload->shards());
}

}  // namespace tpuemu::service
