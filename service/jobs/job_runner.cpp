// JobManager::Run: one job's run on a pool task, as a sequence of units — start (QUEUED ->
// RUNNING), arm the timeout, build the workload from the typed spec, CompileJob, a StepRunner
// step per step (each stored with its line), AssembleResult, and the terminal write; an hlo job
// runs RunHloJob (hlo_job_runner.h) in place of the middle three. A run that stops early ends
// with OutcomeAfterFailure; one interrupted by Shutdown goes back to QUEUED, one stopped by a fault
// with retries left back to its queue (Retry). The task ends with Release, which frees the node
// in JobQueues and starts what may start next. The API and the queueing are job_manager.cpp's.
#include <algorithm>
#include <utility>

#include "engine/hardware.h"
#include "service/common/clock.h"
#include "service/jobs/hlo_job_runner.h"
#include "service/jobs/job_compile.h"
#include "service/jobs/job_manager.h"
#include "service/jobs/job_result.h"
#include "service/jobs/step_runner.h"
#include "service/workloads/workloads.h"

namespace tpuemu::service {
namespace {

using nlohmann::json;

std::string Reason(const Status& s) {
  return std::string(StatusCodeName(s.code())) + ": " + s.message();
}

}  // namespace

// Marks the node free, starts its next job; the last thing a run's task does.
void JobManager::Release(const std::string& node) {
  {
    std::lock_guard lock(mu_);
    queues_.EndRun(node);
    PumpLocked(node);
    PumpMemoryWaitersLocked();  // the memory this job held may let waiting jobs start
  }
  FlushLines();  // before the task count drops: Shutdown waits for these writes too
  std::lock_guard lock(mu_);
  if (--running_tasks_ == 0) idle_.notify_all();
}

// The claim of `job` found the node busy elsewhere: back in its queue, the node blocked, the task
// done (the last thing that run's task does).
void JobManager::Unclaimed(const std::string& node, const Job& job) {
  std::lock_guard lock(mu_);
  queues_.Unclaim(node, /*requeue=*/active_.count(job.name) > 0);
  if (--running_tasks_ == 0) idle_.notify_all();
}

// The outcome of a run that stopped with `failure` (OutcomeAfterFailure, under mu_).
JobOutcome JobManager::AfterFailure(const ActiveJob& active, JobOutcome failure) {
  std::lock_guard lock(mu_);  // mu_ before the CancelRequest's, as in CancelLocked
  return OutcomeAfterFailure(active.cancel, queues_.closed(), std::move(failure));
}

// Whether the run stopped only because of Shutdown (InterruptedByShutdown, under mu_).
bool JobManager::Interrupted(const ActiveJob& active) {
  std::lock_guard lock(mu_);
  return InterruptedByShutdown(active.cancel, queues_.closed());
}

// Arms the job's timer (EffectiveTimeout) for `start_unix_ms` (its startTime) + the limit; it
// requests TIMED_OUT if the job still runs then. Returns that moment for the executor (nullopt
// when there is no limit).
std::optional<RunDeadline> JobManager::ArmTimeout(const std::shared_ptr<ActiveJob>& active,
                                                  int64_t job_timeout_seconds,
                                                  int64_t start_unix_ms) {
  RunTimeout timeout = EffectiveTimeout(job_timeout_seconds, limits_.max_job_seconds);
  if (timeout.seconds <= 0) return std::nullopt;
  // The moment is the job's startTime + the limit, wherever the run is then: the executor polls
  // it inside kernels (RunDeadline::steady), the timer raises the flag for everything else.
  const int64_t due_unix_ms = start_unix_ms + timeout.seconds * 1000;
  RunDeadline deadline{.steady = std::chrono::steady_clock::now() +
                                 std::chrono::milliseconds(due_unix_ms - NowUnixMs()),
                       .reason = timeout.reason};
  std::weak_ptr<ActiveJob> weak = active;
  scheduler_.At(due_unix_ms, [weak, reason = std::move(timeout.reason)] {
    if (std::shared_ptr<ActiveJob> a = weak.lock()) a->cancel.Request(JobState::kTimedOut, reason);
  });
  return deadline;
}

// The run of `name` stopped for a fault it may be retried after: QUEUED again (attempt + 1) in the
// store and in the node's queue (ActiveJob::Requeued); ends it instead if that write fails or a
// cancel came.
void JobManager::Retry(const std::string& node, const std::string& name, const ActiveJob& active) {
  bool requeued = false;
  Result<Job> queued = records_.RequeueAfterFault(name, active.cancel.retry_reason(), &requeued);
  if (!requeued) {
    Finish(name, active.cancel.Outcome(), json());  // as without retries
    return;
  }
  waiters_.Notify(*queued, JobState::kRunning);
  {
    std::lock_guard lock(mu_);
    // After a shutdown began it stays QUEUED in the store and runs after the restart.
    if (queues_.closed()) return;
    if (!active.cancel.has_reason()) {
      EnqueueLocked(node, *queued, ActiveJob::Requeued(*queued, active));
      return;
    }
  }
  // A cancel or timeout came while it was being re-queued: it ends as asked.
  Finish(name, active.cancel.Outcome(), json());
}

// Writes the terminal state (if the job is not already terminal) and wakes the waiters.
void JobManager::Finish(const std::string& name, const JobOutcome& outcome, const json& result) {
  std::optional<JobState> previous;  // set when this call made the job terminal
  Result<Job> final_job = records_.MarkTerminal(name, outcome, result, &previous);
  if (final_job.ok() && previous) waiters_.Notify(*final_job, previous);
  // Not terminal: another replica adopted it and runs it now; its waiters wait for that run.
  if (final_job.ok() && !IsTerminal(final_job->state)) return Forget(name);
  std::vector<JobWaiters::Callback> waiters;
  {
    std::lock_guard lock(mu_);
    active_.erase(name);
    waiters = waiters_.Take(name);
  }
  for (auto& fn : waiters) fn(final_job);
}

void JobManager::Run(const std::string& node, const std::string& name) {
  std::shared_ptr<ActiveJob> active;
  {
    std::lock_guard lock(mu_);
    if (auto it = active_.find(name); it != active_.end()) active = it->second;
  }
  // Interrupted by Shutdown before it started: it is still QUEUED in the store.
  if (active && Interrupted(*active)) return Release(node);
  ClaimResult claim = ClaimResult::kGone;
  Result<Job> job = records_.Claim(name, &claim);
  if (claim == ClaimResult::kStarted) waiters_.Notify(*job, JobState::kQueued);
  if (claim == ClaimResult::kBusy && active && job.ok()) return Unclaimed(node, *job);
  if (claim == ClaimResult::kBusy && active) {
    // The one-running index refused it: another replica's claim on this node won the race.
    Result<Job> queued = records_.Get(name);
    if (queued.ok()) return Unclaimed(node, *queued);
  }
  if (claim != ClaimResult::kStarted || !job.ok() || !active) {
    if (active && !job.ok()) {
      Finish(name, Ended(JobState::kFailed, "could not start: " + job.status().message()), json());
    } else if (active) {
      Forget(name);  // ended, or another replica's now: nothing of it runs here
    }
    return Release(node);
  }
  auto fail = [&](const std::string& reason) {
    Finish(name, AfterFailure(*active, Ended(JobState::kFailed, reason)), json());
    Release(node);
  };
  // A cancel, timeout or shutdown stopped the run: its terminal state, back to QUEUED after a
  // shutdown (were that write to fail, it stays RUNNING and Recover() re-queues it anyway), or
  // after a fault it may be retried after.
  auto stopped = [&] {
    if (!Interrupted(*active)) {
      if (active->cancel.retry_requested()) {
        Retry(node, name, *active);
      } else {
        Finish(name, active->cancel.Outcome(), json());
      }
    } else {
      bool requeued = false;
      Result<Job> queued = records_.RequeueInterrupted(name, &requeued);
      if (requeued) waiters_.Notify(*queued, JobState::kRunning);
    }
    Release(node);
  };
  if (!active->spec) return fail("stored spec: " + Reason(active->spec_error));
  const JobSpec& spec = *active->spec;
  Result<Node> target = nodes_.Get(NodeKey{job->project, job->zone, job->node_id});
  if (!target.ok()) return fail(Reason(target.status()));
  // startTime as stored (what the API shows); now if it cannot be read.
  Result<int64_t> start_ms = ParseRfc3339Ms(job->start_time.value_or(""), "startTime");
  const std::optional<RunDeadline> deadline =
      ArmTimeout(active, spec.timeout_seconds, start_ms.ok() ? *start_ms : NowUnixMs());

  const engine::Slice slice(target->type);
  if (spec.hlo) {
    engine::ParallelContext parallel;
    parallel.pool = &pool_;
    parallel.group = name;
    parallel.max_threads = std::max(1, spec.cores);
    parallel.cancel.flag = active->cancel.flag();
    Result<HloJobEnd> end = RunHloJob(records_, name, spec, slice, parallel);
    if (active->cancel.requested()) return stopped();
    if (!end.ok()) return fail(Reason(end.status()));
    Finish(name, Ended(JobState::kSucceeded, end->reason), end->result);
    return Release(node);
  }
  // Generating a large workload's values takes seconds: it stops at the cancel flag too.
  Result<Workload> workload = Workload::Build(spec, active->cancel.flag());
  if (active->cancel.requested()) return stopped();
  if (!workload.ok()) return fail(Reason(workload.status()));
  Result<CompiledJob> compiled =
      CompileJob(cache_, name, spec, *workload, slice, active->submit_compile);
  if (!compiled.ok()) return fail(Reason(compiled.status()));
  // From now on .../metrics shows the profile: while the job runs, after it fails, after a
  // restart. A failed write only loses that early view; the result stores it again.
  (void)records_.RecordCompile(name, *compiled);

  // A job gets the host threads of the cores it asked for (the caller's thread included), so two
  // one-core jobs on two nodes share the machine instead of each taking all of it, and `cores: 2`
  // runs a large step about twice as fast as `cores: 1` on two host cores.
  // The steps run on the HLO evaluator: the workload's graph lowered once (step_runner.h).
  auto runner =
      StepRunner::Create(compiled->program(), *workload, slice, compiled->tensorcores,
                         {.cancel = active->cancel.flag(),
                          .deadline = deadline ? std::optional(deadline->steady) : std::nullopt,
                          .pool = &pool_,
                          .pool_group = name,
                          .max_threads = std::max(1, spec.cores)});
  if (!runner.ok()) return fail("lowering to HLO: " + Reason(runner.status()));
  RunTotals totals;
  for (int64_t step = 0; step < spec.steps && !active->cancel.requested(); ++step) {
    Result<db::JobStepRow> row = (*runner)->Run(step);
    if (!row.ok()) {
      if (row.status().code() == StatusCode::kCancelled) break;
      // The deadline passed inside the step: TIMED_OUT now, whether or not the timer fired yet.
      if (row.status().code() == StatusCode::kDeadlineExceeded && deadline) {
        active->cancel.Request(JobState::kTimedOut, deadline->reason);
        break;
      }
      return fail(Reason(row.status()));
    }
    totals.Add(*row);
    Status stored = records_.RecordStep(name, *row);
    if (!stored.ok()) return fail("storing step metrics: " + stored.message());
  }
  if (active->cancel.requested()) return stopped();
  const json result = AssembleResult(*compiled,
                                     {.steps = spec.steps,
                                      .allreduce_cycles_per_step = (*runner)->allreduce_cycles(),
                                      .accelerator_type = slice.type().name},
                                     totals, (*runner)->last_outputs());
  Finish(name, Ended(JobState::kSucceeded, "completed " + std::to_string(spec.steps) + " steps"),
         result);
  Release(node);
}

}  // namespace tpuemu::service
