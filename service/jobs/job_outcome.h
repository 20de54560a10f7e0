// How a job ends when it does not run to completion: the cancel request a queued or running job
// carries, the timeout it runs under, and the terminal state, exit code and reason that follow.
//
// CancelRequest is shared by the job's queue entry, its run and its timeout timer: the first
// request with a state wins (a user or node cancel -> CANCELLED, the timer -> TIMED_OUT), later
// ones only keep the flag set. JobManager::Shutdown only raises the flag (Interrupt): the job is
// interrupted, not cancelled, and goes back to QUEUED in the store to re-run after the restart.
// A fault the job may be retried after (host maintenance, maxRetries left) asks for a retry
// (RequestRetry): the run stops and the job is re-queued, unless a Request comes too (a cancel or
// timeout still ends it); were the run to fail instead, it ends FAILED with the fault's reason.
// Thread-safe: the state and reason are guarded by mu_; the flag is an atomic the executor polls
// between ops. Lock order: JobBoard's lock before CancelRequest's.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

#include "service/jobs/job_state.h"

namespace tpuemu::service {

// A terminal state with its exit code and reason.
struct JobOutcome {
  JobState state = JobState::kFailed;
  int exit_code = kExitFailed;
  std::string reason;
  friend bool operator==(const JobOutcome&, const JobOutcome&) = default;
};
// The outcome for a terminal `state` with its exit code (ExitCodeOf).
JobOutcome Ended(JobState state, std::string reason);

class CancelRequest {
 public:
  // Records `state` (CANCELLED, TIMED_OUT, or FAILED when a fault took the node) and `reason`
  // unless a request came first; sets the flag either way.
  void Request(JobState state, std::string reason);
  // Sets the flag only (shutdown).
  void Interrupt() { flag_ = true; }
  // Sets the flag and asks for a retry because of `reason` (the fault), unless a Request came
  // first.
  void RequestRetry(std::string reason);
  // Whether the run should be retried: RequestRetry was called and no Request was made.
  bool retry_requested() const;
  // The fault's reason given to RequestRetry (empty when none).
  std::string retry_reason() const;
  bool requested() const { return flag_; }
  // For engine::ExecuteOptions::cancel; valid as long as this request.
  const std::atomic<bool>* flag() const { return &flag_; }
  // Whether a Request (not only Interrupt) was made.
  bool has_reason() const;
  // The requested outcome; FAILED with the fault's reason after only a RequestRetry; CANCELLED
  // "cancelled" when there was neither.
  JobOutcome Outcome() const;

 private:
  std::atomic<bool> flag_{false};
  mutable std::mutex mu_;
  bool recorded_ = false;     // guarded by mu_
  JobOutcome outcome_;        // guarded by mu_
  std::string retry_reason_;  // guarded by mu_; non-empty after RequestRetry
};

// The outcome of a job whose run stopped with `failure`. A failure that follows a cancel request
// (the node vanished because it is being deleted) reports the cancel and its reason instead —
// unless the only request was a shutdown's interrupt.
JobOutcome OutcomeAfterFailure(const CancelRequest& cancel, bool shutting_down, JobOutcome failure);
// True when the run stopped only because tpuemud is shutting down: the job is re-queued, not ended.
bool InterruptedByShutdown(const CancelRequest& cancel, bool shutting_down);

// The limit a job runs under: its own timeoutSeconds, or the server's --max-job-seconds when that
// is tighter (or the job has none). seconds == 0: no limit. `reason` names the one that applies.
struct RunTimeout {
  int64_t seconds = 0;
  std::string reason;
};
RunTimeout EffectiveTimeout(int64_t job_timeout_seconds, int64_t max_job_seconds);

// When a running job's limit expires (for engine::ExecuteOptions::deadline), and the TIMED_OUT
// reason that names it.
struct RunDeadline {
  std::chrono::steady_clock::time_point steady;
  std::string reason;
};

}  // namespace tpuemu::service
