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
