// JobWaiters: the callbacks waiting for a job, handed out once, and the transition observers.
#include "service/jobs/job_waiters.h"

#include <gtest/gtest.h>

namespace tpuemu::service {
namespace {

TEST(JobWaitersTest, TakeHandsOutEachJobsCallbacksOnce) {
  JobWaiters waiters;
  int calls = 0;
  waiters.Add("a", [&](Result<Job>) { ++calls; });
  waiters.Add("a", [&](Result<Job>) { ++calls; });
  waiters.Add("b", [&](Result<Job>) { calls += 10; });
  EXPECT_TRUE(waiters.Has("a"));
  EXPECT_FALSE(waiters.Has("c"));
  std::vector<JobWaiters::Callback> a = waiters.Take("a");
  ASSERT_EQ(a.size(), 2u);
  for (auto& fn : a) fn(Job{});
  EXPECT_EQ(calls, 2);
  EXPECT_FALSE(waiters.Has("a"));
  EXPECT_TRUE(waiters.Take("a").empty());
  EXPECT_TRUE(waiters.Has("b"));
}

TEST(JobWaitersTest, ObserversSeeEveryTransitionInOrder) {
  JobWaiters waiters;
  std::vector<std::string> seen;
  waiters.AddObserver([&](const Job& job, std::optional<JobState> previous) {
    seen.push_back(job.name + (previous ? ":" + std::string(JobStateName(*previous)) : ""));
  });
  waiters.AddObserver(nullptr);  // ignored
  Job job;
  job.name = "j";
  waiters.Notify(job, std::nullopt);
  waiters.Notify(job, JobState::kQueued);
  EXPECT_EQ(seen, (std::vector<std::string>{"j", "j:QUEUED"}));
}

}  // namespace
}  // namespace tpuemu::service
