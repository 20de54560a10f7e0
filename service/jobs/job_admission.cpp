// JobManager's host-memory admission (job_manager.h "Host memory"): the plan of a job's peak host
// bytes at submit, the per-job check, and the admission of a node's next job against the
// daemon-wide budget. Split from job_manager.cpp, which owns the queues and the API.
#include <algorithm>
#include <vector>

#include "engine/hlo/host_memory.h"
#include "service/jobs/job_compile.h"
#include "service/jobs/job_log_lines.h"
#include "service/jobs/job_manager.h"
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

int64_t JobManager::PlanHostBytes(const JobSpec& spec, const Node& node,
                                  std::optional<SubmitCompile>* compile) {
  if (limits_.max_job_host_memory_bytes <= 0 && limits_.host_memory_budget_bytes <= 0) return 0;
  // An hlo job: the evaluator's own liveness sweep over the parsed module (engine/hlo/
  // host_memory.h); an estimate-only one holds no value.
  if (spec.hlo) return spec.hlo->estimate_only ? 0 : engine::hlo::PeakHostBytes(*spec.hlo->module);
  Result<Workload> workload = Workload::BuildGraphOnly(spec);
  if (!workload.ok()) return 0;
  // The run compiles the same graph for the same slice: a cache hit then.
  Result<CompiledJob> compiled =
      CompileJob(cache_, /*job_name=*/"", spec, *workload, engine::Slice(node.type));
  if (!compiled.ok()) return 0;
  if (!compiled->lookup.hit) {
    *compile = SubmitCompile{.program = compiled->lookup.program,
                             .compile_seconds = compiled->lookup.compile_seconds};
  }
  return JobHostBytes(compiled->program(), workload->graph(), workload->shards());
}

bool JobManager::AdmitLocked(const std::string& node, const std::string& name, int64_t seq) {
  auto it = active_.find(name);
  const int64_t bytes = it == active_.end() ? 0 : it->second->host_bytes;
  const bool older_waits = !memory_waiting_.empty() && memory_waiting_.begin()->first < seq;
  if (!older_waits && budget_.TryReserve(bytes)) return true;
  memory_waiting_.insert({seq, node});
  if (it != active_.end() && !it->second->wait_logged) {
    it->second->wait_logged = true;
    // Written by the path that pumped, once it released mu_ (FlushLines), not by a pool task
    // that would wait behind running jobs.
    pending_lines_.push_back(
        {name, HostMemoryWaitLine(bytes, budget_.reserved_bytes(), budget_.budget_bytes())});
  }
  return false;
}

void JobManager::PumpMemoryWaitersLocked() {
  // PumpLocked edits memory_waiting_: walk a copy, oldest job first.
  const std::vector<std::pair<int64_t, std::string>> waiters(memory_waiting_.begin(),
                                                             memory_waiting_.end());
  for (const auto& waiter : waiters) PumpLocked(waiter.second);
}

void JobManager::FlushLines() {
  std::vector<std::pair<std::string, std::string>> lines;
  {
    std::lock_guard lock(mu_);
    lines.swap(pending_lines_);
  }
  for (const auto& [name, line] : lines) (void)records_.AppendLine(name, line);
}

}  // namespace tpuemu::service
