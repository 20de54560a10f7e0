#include "service/jobs/job_outcome.h"

#include <utility>

namespace tpuemu::service {

JobOutcome Ended(JobState state, std::string reason) {
  return JobOutcome{state, ExitCodeOf(state), std::move(reason)};
}

void CancelRequest::Request(JobState state, std::string reason) {
  {
    std::lock_guard lock(mu_);
    if (!recorded_) {
      recorded_ = true;
      outcome_ = Ended(state, std::move(reason));
    }
  }
  flag_ = true;
}

void CancelRequest::RequestRetry(std::string reason) {
  {
    std::lock_guard lock(mu_);
    if (!recorded_ && retry_reason_.empty()) retry_reason_ = std::move(reason);
  }
  flag_ = true;
}

bool CancelRequest::retry_requested() const {
  std::lock_guard lock(mu_);
  return !recorded_ && !retry_reason_.empty();
}

std::string CancelRequest::retry_reason() const {
  std::lock_guard lock(mu_);
  return retry_reason_;
}

bool CancelRequest::has_reason() const {
  std::lock_guard lock(mu_);
  return recorded_;
}

JobOutcome CancelRequest::Outcome() const {
  std::lock_guard lock(mu_);
  if (!recorded_ && !retry_reason_.empty()) return Ended(JobState::kFailed, retry_reason_);
  if (!recorded_) return Ended(JobState::kCancelled, "cancelled");
  return outcome_;
}

bool InterruptedByShutdown(const CancelRequest& cancel, bool shutting_down) {
  return shutting_down && !cancel.has_reason();
}

JobOutcome OutcomeAfterFailure(const CancelRequest& cancel, bool shutting_down,
                               JobOutcome failure) {
  if (cancel.requested() && !InterruptedByShutdown(cancel, shutting_down)) return cancel.Outcome();
  return failure;
}

RunTimeout EffectiveTimeout(int64_t job_timeout_seconds, int64_t max_job_seconds) {
  if (max_job_seconds > 0 && (job_timeout_seconds == 0 || job_timeout_seconds > max_job_seconds)) {
    return {max_job_seconds, "the job exceeded the server's maximum job duration of " +
                                 std::to_string(max_job_seconds) + "s (--max-job-seconds)"};
  }
  return {job_timeout_seconds,
          "the job exceeded timeoutSeconds=" + std::to_string(job_timeout_seconds)};
}

}  // namespace tpuemu::service
