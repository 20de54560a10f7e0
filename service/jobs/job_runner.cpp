// JobRunner (job_runner.h): one job's run as a sequence of units. The queueing and ending moves
// are JobBoard's; the store's rules (claims, fencing) JobRecords'.
#include "service/jobs/job_runner.h"

#include <algorithm>
#include <utility>

#include "engine/hardware/hardware.h"
#include "service/common/clock.h"
#include "service/jobs/hlo_job_runner.h"
#include "service/jobs/job_compile.h"
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

// The outcome of a run that stopped with `failure` (OutcomeAfterFailure, under the board's lock).
JobOutcome JobRunner::AfterFailure(const ActiveJob& active, JobOutcome failure) {
  JobBoard::Locked board(p_.board);  // the board's lock before the CancelRequest's
  return OutcomeAfterFailure(active.cancel, board.queues().closed(), std::move(failure));
}

// Whether the run stopped only because of Shutdown (InterruptedByShutdown, under the board's lock).
bool JobRunner::Interrupted(const ActiveJob& active) {
  JobBoard::Locked board(p_.board);
  return InterruptedByShutdown(active.cancel, board.queues().closed());
}

// Arms the job's timer (EffectiveTimeout) for `start_unix_ms` (its startTime) + the limit; it
// requests TIMED_OUT if the job still runs then. Returns that moment for the executor (nullopt
// when there is no limit).
std::optional<RunDeadline> JobRunner::ArmTimeout(const std::shared_ptr<ActiveJob>& active,
                                                 int64_t job_timeout_seconds,
                                                 int64_t start_unix_ms) {
  RunTimeout timeout = EffectiveTimeout(job_timeout_seconds, p_.limits.max_job_seconds);
  if (timeout.seconds <= 0) return std::nullopt;
  // The moment is the job's startTime + the limit, wherever the run is then: the executor polls
  // it inside kernels (RunDeadline::steady), the timer raises the flag for everything else.
  const int64_t due_unix_ms = start_unix_ms + timeout.seconds * 1000;
  RunDeadline deadline{.steady = std::chrono::steady_clock::now() +
                                 std::chrono::milliseconds(due_unix_ms - NowUnixMs()),
                       .reason = timeout.reason};
  std::weak_ptr<ActiveJob> weak = active;
  p_.scheduler.At(due_unix_ms, [weak, reason = std::move(timeout.reason)] {
    if (std::shared_ptr<ActiveJob> a = weak.lock()) a->cancel.Request(JobState::kTimedOut, reason);
  });
  return deadline;
}

// The run of `name` stopped for a fault it may be retried after: QUEUED again (attempt + 1) in the
// store and in the node's queue (ActiveJob::Requeued); ends it instead if that write fails or a
// cancel came.
void JobRunner::Retry(const std::string& node, const std::string& name, const ActiveJob& active) {
  bool requeued = false;
  Result<Job> queued = p_.records.RequeueAfterFault(name, active.cancel.retry_reason(), &requeued);
  if (!requeued) {
    p_.board.Finish(name, active.cancel.Outcome(), json());  // as without retries
    return;
  }
  p_.waiters.Notify(*queued, JobState::kRunning);
  {
    JobBoard::Locked board(p_.board);
    // After a shutdown began it stays QUEUED in the store and runs after the restart.
    if (board.queues().closed()) return;
    if (!active.cancel.has_reason()) {
      board.Enqueue(node, *queued, ActiveJob::Requeued(*queued, active));
      return;
    }
  }
  // A cancel or timeout came while it was being re-queued: it ends as asked.
  p_.board.Finish(name, active.cancel.Outcome(), json());
}

void JobRunner::Run(const std::string& node, const std::string& name) {
  std::shared_ptr<ActiveJob> active = JobBoard::Locked(p_.board).Find(name);
  // Interrupted by Shutdown before it started: it is still QUEUED in the store.
  if (active && Interrupted(*active)) return p_.board.Release(node);
  ClaimResult claim = ClaimResult::kGone;
  Result<Job> job = p_.records.Claim(name, &claim);
  if (claim == ClaimResult::kStarted) p_.waiters.Notify(*job, JobState::kQueued);
  if (claim == ClaimResult::kBusy && active && job.ok()) return p_.board.Unclaimed(node, *job);
  if (claim == ClaimResult::kBusy && active) {
    // The one-running index refused it: another replica's claim on this node won the race.
    Result<Job> queued = p_.records.Get(name);
    if (queued.ok()) return p_.board.Unclaimed(node, *queued);
  }
  if (claim != ClaimResult::kStarted || !job.ok() || !active) {
    if (active && !job.ok()) {
      p_.board.Finish(name, Ended(JobState::kFailed, "could not start: " + job.status().message()),
                      json());
    } else if (active) {
      p_.board.Forget(name);  // ended, or another replica's now: nothing of it runs here
    }
    return p_.board.Release(node);
  }
  auto fail = [&](const std::string& reason) {
    p_.board.Finish(name, AfterFailure(*active, Ended(JobState::kFailed, reason)), json());
    p_.board.Release(node);
  };
  // A cancel, timeout or shutdown stopped the run: its terminal state, back to QUEUED after a
  // shutdown (were that write to fail, it stays RUNNING and Recover() re-queues it anyway), or
  // after a fault it may be retried after.
  auto stopped = [&] {
    if (!Interrupted(*active)) {
      if (active->cancel.retry_requested()) {
        Retry(node, name, *active);
      } else {
        p_.board.Finish(name, active->cancel.Outcome(), json());
      }
    } else {
      bool requeued = false;
      Result<Job> queued = p_.records.RequeueInterrupted(name, &requeued);
      if (requeued) p_.waiters.Notify(*queued, JobState::kRunning);
    }
    p_.board.Release(node);
  };
  if (!active->spec) return fail("stored spec: " + Reason(active->spec_error));
  const JobSpec& spec = *active->spec;
  Result<Node> target = p_.nodes.Get(NodeKey{job->project, job->zone, job->node_id});
  if (!target.ok()) return fail(Reason(target.status()));
  // startTime as stored (what the API shows); now if it cannot be read.
  Result<int64_t> start_ms = ParseRfc3339Ms(job->start_time.value_or(""), "startTime");
  const std::optional<RunDeadline> deadline =
      ArmTimeout(active, spec.timeout_seconds, start_ms.ok() ? *start_ms : NowUnixMs());

  const engine::Slice slice(target->type);
  if (spec.hlo) {
    engine::ParallelContext parallel;
    parallel.pool = &p_.pool;
    parallel.group = name;
    parallel.max_threads = std::max(1, spec.cores);
    parallel.cancel.flag = active->cancel.flag();
    Result<HloJobEnd> end = RunHloJob(p_.records, name, spec, slice, parallel);
    if (active->cancel.requested()) return stopped();
    if (!end.ok()) return fail(Reason(end.status()));
    p_.board.Finish(name, Ended(JobState::kSucceeded, end->reason), end->result);
    return p_.board.Release(node);
  }
  // Generating a large workload's values takes seconds: it stops at the cancel flag too.
  Result<Workload> workload = Workload::Build(spec, active->cancel.flag());
  if (active->cancel.requested()) return stopped();
  if (!workload.ok()) return fail(Reason(workload.status()));
  Result<CompiledJob> compiled =
      CompileJob(p_.cache, name, spec, *workload, slice, active->submit_compile);
  if (!compiled.ok()) return fail(Reason(compiled.status()));
  // From now on .../metrics shows the profile: while the job runs, after it fails, after a
  // restart. A failed write only loses that early view; the result stores it again.
  p_.records.RecordCompileLater(name, *compiled);

  // A job gets the host threads of the cores it asked for (the caller's thread included), so two
  // one-core jobs on two nodes share the machine instead of each taking all of it, and `cores: 2`
  // runs a large step about twice as fast as `cores: 1` on two host cores.
  // The steps run on the HLO evaluator: the workload's graph lowered once (step_runner.h).
  auto runner =
      StepRunner::Create(compiled->program(), *workload, slice, compiled->tensorcores,
                         {.cancel = active->cancel.flag(),
                          .deadline = deadline ? std::optional(deadline->steady) : std::nullopt,
                          .pool = &p_.pool,
                          .pool_group = name,
                          .max_threads = std::max(1, spec.cores)});
  if (!runner.ok()) return fail("lowering to HLO: " + Reason(runner.status()));
  RunTotals totals;
  // The last step's row is written with the job's end, in one commit (a tiny job's writes are
  // its cost: bench_jobs); were the run to stop before that, it is written on its own first.
  std::optional<db::JobStepRow> last;
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
    if (step + 1 == spec.steps) {
      last = std::move(row).value();
      break;
    }
    Status stored = p_.records.RecordStep(name, *row);
    if (!stored.ok()) return fail("storing step metrics: " + stored.message());
  }
  if (active->cancel.requested()) {
    if (last) (void)p_.records.RecordStep(name, *last);  // as it was before the stop
    return stopped();
  }
  const json result = AssembleResult(*compiled,
                                     {.steps = spec.steps,
                                      .allreduce_cycles_per_step = (*runner)->allreduce_cycles(),
                                      .accelerator_type = slice.type().name},
                                     totals, (*runner)->last_outputs());
  p_.board.FinishAndRelease(
      node, name, Ended(JobState::kSucceeded, "completed " + std::to_string(spec.steps) + " steps"),
      result, std::move(last));
}

}  // namespace tpuemu::service
