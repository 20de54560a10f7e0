#include "service/jobs/job_state.h"

#include <gtest/gtest.h>

namespace tpuemu::service {
namespace {

TEST(JobStateTest, NamesRoundTripAndUnknownNamesAreRejected) {
  for (JobState s : {JobState::kQueued, JobState::kRunning, JobState::kSucceeded, JobState::kFailed,
                     JobState::kCancelled, JobState::kTimedOut}) {
    Result<JobState> back = ParseJobState(JobStateName(s));
    ASSERT_TRUE(back.ok()) << JobStateName(s);
    EXPECT_EQ(*back, s);
  }
  EXPECT_EQ(JobStateName(JobState::kTimedOut), "TIMED_OUT");
  EXPECT_EQ(ParseJobState("queued").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseJobState("").status().code(), StatusCode::kInvalidArgument);
}

TEST(JobStateTest, TerminalStatesCarryTheShellExitCodes) {
  EXPECT_FALSE(IsTerminal(JobState::kQueued));
  EXPECT_FALSE(IsTerminal(JobState::kRunning));
  EXPECT_TRUE(IsTerminal(JobState::kSucceeded));
  EXPECT_TRUE(IsTerminal(JobState::kFailed));
  EXPECT_TRUE(IsTerminal(JobState::kCancelled));
  EXPECT_TRUE(IsTerminal(JobState::kTimedOut));
  EXPECT_EQ(ExitCodeOf(JobState::kSucceeded), 0);
  EXPECT_EQ(ExitCodeOf(JobState::kFailed), 1);
  EXPECT_EQ(ExitCodeOf(JobState::kTimedOut), 124);
  EXPECT_EQ(ExitCodeOf(JobState::kCancelled), 130);
}

}  // namespace
}  // namespace tpuemu::service
