// JobRunner: one job's run, the body of the pool task JobBoard starts for it — claim it (QUEUED ->
// RUNNING), arm its timeout, build the workload from the typed spec, CompileJob, a StepRunner step
// per step (each stored with its line), AssembleResult, and the terminal write; an hlo job runs
// RunHloJob (hlo_job_runner.h) in place of the middle three. A run that stops early ends with
// OutcomeAfterFailure; one interrupted by Shutdown goes back to QUEUED, one stopped by a fault
// with retries left back to its queue (Retry). The task ends with JobBoard::Release (the node is
// free and its next job may start) or JobBoard::Unclaimed.
// Threads: Run runs on pool tasks, one per node at a time, many nodes at once; the class keeps no
// state of its own. Everything it holds is borrowed and must outlive it.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "service/jobs/active_job.h"
#include "service/jobs/job_outcome.h"
#include "service/jobs/job_parts.h"

namespace tpuemu::service {

class JobRunner {
 public:
  explicit JobRunner(JobParts parts) : p_(parts) {}

  // Runs queued job `name` on `node` to its end (a pool task's body, started by JobBoard).
  void Run(const std::string& node, const std::string& name);

 private:
  std::optional<RunDeadline> ArmTimeout(const std::shared_ptr<ActiveJob>& active,
                                        int64_t job_timeout_seconds, int64_t start_unix_ms);
  JobOutcome AfterFailure(const ActiveJob& active, JobOutcome failure);
  bool Interrupted(const ActiveJob& active);
  void Retry(const std::string& node, const std::string& name, const ActiveJob& active);

  JobParts p_;
};

}  // namespace tpuemu::service
