#include "service/jobs/job_outcome.h"

#include <gtest/gtest.h>

namespace tpuemu::service {
namespace {

TEST(CancelRequestTest, TheFirstRequestWinsAndSetsTheFlag) {
  CancelRequest cancel;
  EXPECT_FALSE(cancel.requested());
  EXPECT_FALSE(cancel.flag()->load());
  cancel.Request(JobState::kTimedOut, "too slow");
  cancel.Request(JobState::kCancelled, "by the user");
  EXPECT_TRUE(cancel.requested());
  EXPECT_TRUE(cancel.flag()->load());
  EXPECT_TRUE(cancel.has_reason());
  EXPECT_EQ(cancel.Outcome(), (JobOutcome{JobState::kTimedOut, 124, "too slow"}));
}

TEST(CancelRequestTest, ARetryRequestStopsTheRunUnlessARequestComesToo) {
  CancelRequest retry;
  retry.RequestRetry("interrupted by host maintenance: m");
  EXPECT_TRUE(retry.requested());
  EXPECT_TRUE(retry.retry_requested());
  EXPECT_FALSE(retry.has_reason());  // a shutdown still re-queues it as after any interrupt
  EXPECT_EQ(retry.retry_reason(), "interrupted by host maintenance: m");
  // Were the run to fail instead, it ends with the fault's reason.
  EXPECT_EQ(retry.Outcome(),
            (JobOutcome{JobState::kFailed, 1, "interrupted by host maintenance: m"}));
  EXPECT_EQ(OutcomeAfterFailure(retry, /*shutting_down=*/false, Ended(JobState::kFailed, "x")),
            retry.Outcome());
  retry.Request(JobState::kCancelled, "cancelled by the user");
  EXPECT_FALSE(retry.retry_requested());
  EXPECT_EQ(retry.Outcome().state, JobState::kCancelled);

  CancelRequest cancelled;
  cancelled.Request(JobState::kTimedOut, "too slow");
  cancelled.RequestRetry("maintenance");
  EXPECT_FALSE(cancelled.retry_requested());
  EXPECT_EQ(cancelled.Outcome().state, JobState::kTimedOut);
}

TEST(CancelRequestTest, AnInterruptIsNotACancel) {
  CancelRequest cancel;
  cancel.Interrupt();
  EXPECT_TRUE(cancel.requested());
  EXPECT_FALSE(cancel.has_reason());
  EXPECT_EQ(cancel.Outcome(), (JobOutcome{JobState::kCancelled, 130, "cancelled"}));
  EXPECT_TRUE(InterruptedByShutdown(cancel, /*shutting_down=*/true));
  EXPECT_FALSE(InterruptedByShutdown(cancel, /*shutting_down=*/false));
}

TEST(OutcomeAfterFailureTest, AFailureAfterACancelReportsTheCancel) {
  const JobOutcome failure = Ended(JobState::kFailed, "NOT_FOUND: node gone");
  CancelRequest none;
  EXPECT_EQ(OutcomeAfterFailure(none, false, failure), failure);

  CancelRequest deleting;
  deleting.Request(JobState::kCancelled, "node n is deleting");
  EXPECT_EQ(OutcomeAfterFailure(deleting, false, failure),
            (JobOutcome{JobState::kCancelled, 130, "node n is deleting"}));
  // A real cancel wins even while shutting down; a bare interrupt does not.
  EXPECT_EQ(OutcomeAfterFailure(deleting, true, failure).state, JobState::kCancelled);
  CancelRequest interrupted;
  interrupted.Interrupt();
  EXPECT_EQ(OutcomeAfterFailure(interrupted, true, failure), failure);
}

TEST(EffectiveTimeoutTest, TheTighterLimitAppliesAndIsNamed) {
  EXPECT_EQ(EffectiveTimeout(0, 0).seconds, 0);
  RunTimeout own = EffectiveTimeout(30, 0);
  EXPECT_EQ(own.seconds, 30);
  EXPECT_EQ(own.reason, "the job exceeded timeoutSeconds=30");
  EXPECT_EQ(EffectiveTimeout(30, 60).seconds, 30);
  RunTimeout server = EffectiveTimeout(0, 60);
  EXPECT_EQ(server.seconds, 60);
  EXPECT_EQ(server.reason,
            "the job exceeded the server's maximum job duration of 60s (--max-job-seconds)");
  EXPECT_EQ(EffectiveTimeout(90, 60).seconds, 60);
}

}  // namespace
}  // namespace tpuemu::service
