// JobQueues: which job each node starts next — priority then submission order, one job per node,
// maintenance holds, replica blocks, and host-memory admission (oldest waiting job first).
#include "service/jobs/job_queues.h"

#include <gtest/gtest.h>

namespace tpuemu::service {
namespace {

using OutboxLines = std::vector<std::pair<std::string, std::string>>;

JobQueues::Entry QueuedEntry(const std::string& name, int64_t seq, int64_t priority = 0,
                             int64_t host_bytes = 0) {
  return {.name = name, .priority = priority, .seq = seq, .host_bytes = host_bytes};
}

// Starts the node's jobs one after another (each run ends before the next starts).
std::vector<std::string> StartInTurn(JobQueues& queues, const std::string& node) {
  std::vector<std::string> started;
  while (std::optional<std::string> name = queues.StartNext(node)) {
    started.push_back(*name);
    queues.EndRun(node);
  }
  return started;
}

TEST(JobQueuesTest, HigherPriorityFirstThenSubmissionOrder) {
  JobQueues queues(/*budget_bytes=*/0);
  queues.Push("n", QueuedEntry("low-1", 1));
  queues.Push("n", QueuedEntry("high-3", 3, /*priority=*/5));
  queues.Push("n", QueuedEntry("low-2", 2));
  queues.Push("n", QueuedEntry("high-4", 4, /*priority=*/5));
  queues.Push("n", QueuedEntry("urgent-5", 5, /*priority=*/9));
  EXPECT_EQ(queues.Jobs("n"),
            (std::vector<std::string>{"urgent-5", "high-3", "high-4", "low-1", "low-2"}));
  EXPECT_EQ(StartInTurn(queues, "n"),
            (std::vector<std::string>{"urgent-5", "high-3", "high-4", "low-1", "low-2"}));
}

TEST(JobQueuesTest, ANodeRunsOneJobAtATimeAndNodesAreIndependent) {
  JobQueues queues(0);
  queues.Push("a", QueuedEntry("a1", 1));
  queues.Push("a", QueuedEntry("a2", 2));
  queues.Push("b", QueuedEntry("b1", 3));
  EXPECT_EQ(queues.StartNext("a"), "a1");
  EXPECT_EQ(queues.StartNext("a"), std::nullopt) << "a1 still runs";
  EXPECT_EQ(queues.Running("a"), "a1");
  EXPECT_EQ(queues.Jobs("a"), (std::vector<std::string>{"a2", "a1"})) << "queued, then running";
  EXPECT_EQ(queues.StartNext("b"), "b1");
  queues.EndRun("a");
  EXPECT_EQ(queues.Running("a"), "");
  EXPECT_EQ(queues.StartNext("a"), "a2");
  EXPECT_EQ(queues.StartNext("c"), std::nullopt) << "a node with no queue starts nothing";
}

TEST(JobQueuesTest, AHeldNodeStartsNothingUntilUnheld) {
  JobQueues queues(0);
  queues.Hold("n");
  queues.Push("n", QueuedEntry("j", 1));
  EXPECT_TRUE(queues.IsHeld("n"));
  EXPECT_EQ(queues.StartNext("n"), std::nullopt);
  EXPECT_EQ(queues.StartNext("other"), std::nullopt);
  EXPECT_TRUE(queues.Unhold("n"));
  EXPECT_FALSE(queues.Unhold("n")) << "it was held once";
  EXPECT_EQ(queues.StartNext("n"), "j");
}

TEST(JobQueuesTest, AnUnclaimedJobGoesBackAndItsNodeWaitsUntilUnblocked) {
  JobQueues queues(/*budget_bytes=*/100);
  queues.Push("n", QueuedEntry("j", 1, 0, /*host_bytes=*/80));
  queues.Push("n", QueuedEntry("k", 2));
  ASSERT_EQ(queues.StartNext("n"), "j");
  EXPECT_EQ(queues.reserved_host_bytes(), 80);
  // Another replica runs a job on n: j returns to the head of its queue, its bytes to the budget.
  queues.Unclaim("n", /*requeue=*/true);
  EXPECT_EQ(queues.reserved_host_bytes(), 0);
  EXPECT_EQ(queues.Jobs("n"), (std::vector<std::string>{"j", "k"}));
  EXPECT_EQ(queues.StartNext("n"), std::nullopt) << "blocked";
  queues.Unblock("n");
  EXPECT_EQ(queues.StartNext("n"), "j");

  // A job that left while its claim was refused does not come back; the node is blocked all
  // the same, until UnblockAll (the heartbeat's retry) names it.
  queues.Unclaim("n", /*requeue=*/false);
  EXPECT_EQ(queues.Jobs("n"), (std::vector<std::string>{"k"}));
  EXPECT_EQ(queues.StartNext("n"), std::nullopt);
  EXPECT_EQ(queues.UnblockAll(), (std::vector<std::string>{"n"}));
  EXPECT_TRUE(queues.UnblockAll().empty());
  EXPECT_EQ(queues.StartNext("n"), "k");
}

TEST(JobQueuesTest, MemoryIsAdmittedOldestWaitingJobFirst) {
  JobQueues queues(/*budget_bytes=*/100);
  queues.Push("a", QueuedEntry("a1", 1, 0, 60));
  queues.Push("b", QueuedEntry("b2", 2, 0, 60));
  queues.Push("c", QueuedEntry("c3", 3, 0, 30));
  ASSERT_EQ(queues.StartNext("a"), "a1");
  EXPECT_EQ(queues.StartNext("b"), std::nullopt) << "60 + 60 > 100";
  // c3 would fit beside a1, but b2 is older and waits: c3 does not overtake it.
  EXPECT_EQ(queues.StartNext("c"), std::nullopt);
  EXPECT_EQ(queues.MemoryWaiters(), (std::vector<std::string>{"b", "c"}));
  queues.EndRun("a");
  EXPECT_EQ(queues.reserved_host_bytes(), 0);
  std::vector<std::string> started;
  for (const std::string& node : queues.MemoryWaiters()) {
    if (std::optional<std::string> name = queues.StartNext(node)) started.push_back(*name);
  }
  EXPECT_EQ(started, (std::vector<std::string>{"b2", "c3"}));
  EXPECT_EQ(queues.reserved_host_bytes(), 90);
  EXPECT_TRUE(queues.MemoryWaiters().empty());
}

TEST(JobQueuesTest, AWaitingJobLogsWhyOnce) {
  JobQueues queues(/*budget_bytes=*/100);
  queues.Push("a", QueuedEntry("a1", 1, 0, 70));
  queues.Push("b", QueuedEntry("b2", 2, 0, 50));
  ASSERT_EQ(queues.StartNext("a"), "a1");
  EXPECT_TRUE(queues.TakeLines().empty()) << "a1 did not wait";
  EXPECT_EQ(queues.StartNext("b"), std::nullopt);
  EXPECT_EQ(queues.StartNext("b"), std::nullopt);
  OutboxLines lines = queues.TakeLines();
  ASSERT_EQ(lines.size(), 1u) << "one line however often it is tried";
  EXPECT_EQ(lines[0].first, "b2");
  EXPECT_EQ(lines[0].second,
            "waiting for host memory: needs 50 bytes at its peak; 70 of the 100-byte budget "
            "reserved by running jobs");
  EXPECT_TRUE(queues.TakeLines().empty()) << "taken once";
  queues.AddLine("a1", "held");
  EXPECT_EQ(queues.TakeLines(), (OutboxLines{{"a1", "held"}}));
}

TEST(JobQueuesTest, AJobLargerThanTheBudgetRunsAlone) {
  JobQueues queues(/*budget_bytes=*/100);
  queues.Push("a", QueuedEntry("huge", 1, 0, 500));
  queues.Push("b", QueuedEntry("small", 2, 0, 1));
  EXPECT_EQ(queues.StartNext("a"), "huge");
  EXPECT_EQ(queues.StartNext("b"), std::nullopt);
  queues.EndRun("a");
  EXPECT_EQ(queues.StartNext("b"), "small");
}

TEST(JobQueuesTest, WithdrawSaysWhereAJobWasAndTakesAQueuedOneOut) {
  JobQueues queues(0);
  queues.Push("n", QueuedEntry("run", 1));
  queues.Push("n", QueuedEntry("next", 2));
  queues.Push("n", QueuedEntry("later", 3));
  ASSERT_EQ(queues.StartNext("n"), "run");

  std::optional<JobQueues::Place> later = queues.Withdraw("later");
  ASSERT_TRUE(later);
  EXPECT_EQ(later->node, "n");
  EXPECT_FALSE(later->running);
  EXPECT_FALSE(later->next);

  std::optional<JobQueues::Place> next = queues.Withdraw("next");
  ASSERT_TRUE(next);
  EXPECT_TRUE(next->next) << "the node may start another job now";

  std::optional<JobQueues::Place> running = queues.Withdraw("run");
  ASSERT_TRUE(running);
  EXPECT_TRUE(running->running);
  EXPECT_EQ(queues.Running("n"), "run") << "a running job keeps its slot until its run ends";

  EXPECT_EQ(queues.Withdraw("later"), std::nullopt) << "gone";
  EXPECT_EQ(queues.Withdraw("unknown"), std::nullopt);
}

TEST(JobQueuesTest, ClosedQueuesStartNothingAndClearForgetsEverything) {
  JobQueues queues(0);
  queues.Push("n", QueuedEntry("j", 1));
  queues.Hold("m");
  queues.Close();
  EXPECT_TRUE(queues.closed());
  EXPECT_EQ(queues.StartNext("n"), std::nullopt);
  queues.Clear();
  EXPECT_TRUE(queues.Jobs("n").empty());
  EXPECT_FALSE(queues.IsHeld("m"));
  EXPECT_TRUE(queues.Nodes().empty());
}

}  // namespace
}  // namespace tpuemu::service
