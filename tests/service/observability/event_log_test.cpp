// EventLog: node and job transitions become ordered, durable events; List pages by seq; WaitFor
// fires once an event past `since` is written (now or later) and CancelWait drops a waiter.
#include "service/observability/event_log.h"

#include <gtest/gtest.h>

#include <atomic>

#include "tests/support/wait_for.h"

namespace tpuemu::service {
namespace {

Node MakeNode(NodeState state) {
  Node n;
  n.key = {"proj", "us-central2-b", "my-tpu"};
  n.state = state;
  return n;
}

Job MakeJob(JobState state) {
  Job j;
  j.project = "proj";
  j.zone = "us-central2-b";
  j.node_id = "my-tpu";
  j.job_id = "j1";
  j.name = "projects/proj/locations/us-central2-b/nodes/my-tpu/jobs/j1";
  j.state = state;
  return j;
}

class EventLogTest : public ::testing::Test {
 protected:
  std::unique_ptr<db::Store> store_ = std::move(db::Store::Open(":memory:").value());
  EventLog log_{*store_};
};

TEST_F(EventLogTest, NodeAndJobTransitionsInOrder) {
  log_.OnNodeStateChanged(MakeNode(NodeState::kCreating), NodeState::kUnspecified);
  log_.OnNodeStateChanged(MakeNode(NodeState::kReady), NodeState::kCreating);
  log_.OnJobStateChanged(MakeJob(JobState::kQueued), std::nullopt);
  Job done = MakeJob(JobState::kSucceeded);
  done.exit_code = 0;
  done.reason = "completed 1 steps";
  log_.OnJobStateChanged(done, JobState::kRunning);
  log_.OnNodeStateChanged(MakeNode(NodeState::kUnspecified), NodeState::kDeleting);
  log_.Flush();

  Result<EventPage> page = log_.List("proj", 0, 0);
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  ASSERT_EQ(page->events.size(), 5u);
  const auto& e = page->events;
  EXPECT_EQ(e[0].kind, "node");
  EXPECT_EQ(e[0].state, "CREATING");
  EXPECT_FALSE(e[0].previous_state.has_value());
  EXPECT_EQ(e[0].resource, "projects/proj/locations/us-central2-b/nodes/my-tpu");
  EXPECT_EQ(e[0].zone, "us-central2-b");
  EXPECT_EQ(e[1].message, "node my-tpu CREATING -> READY");
  EXPECT_EQ(e[2].kind, "job");
  EXPECT_EQ(e[2].message, "job j1 queued on node my-tpu");
  EXPECT_EQ(e[3].message, "job j1 RUNNING -> SUCCEEDED (exit code 0: completed 1 steps)");
  EXPECT_EQ(e[4].state, "DELETED");
  EXPECT_EQ(e[4].previous_state, "DELETING");
  for (size_t i = 1; i < e.size(); ++i) EXPECT_LT(e[i - 1].seq, e[i].seq);
  EXPECT_EQ(page->next_since, e.back().seq);

  Result<EventPage> two = log_.List("proj", e[0].seq, 2);
  ASSERT_TRUE(two.ok());
  ASSERT_EQ(two->events.size(), 2u);
  EXPECT_EQ(two->events[0].seq, e[1].seq);
  EXPECT_EQ(two->next_since, e[2].seq);
  Result<EventPage> none = log_.List("other", 0, 0);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->events.empty());
  EXPECT_EQ(none->next_since, 0);
  EXPECT_EQ(log_.List("proj", -1, 0).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(log_.List("proj", 0, 5000).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(EventLogTest, WaitForFiresAfterTheNextEventAndCancelDrops) {
  std::atomic<int> fired{0};
  std::atomic<int> cancelled_fired{0};
  log_.WaitFor("proj", 0, [&] { ++fired; });
  uint64_t dropped = log_.WaitFor("proj", 0, [&] { ++cancelled_fired; });
  log_.CancelWait(dropped);
  log_.WaitFor("other", 0, [&] { ADD_FAILURE() << "another project's event woke this"; });
  EXPECT_EQ(fired.load(), 0);
  log_.OnNodeStateChanged(MakeNode(NodeState::kCreating), NodeState::kUnspecified);
  EXPECT_TRUE(testing::WaitFor([&] { return fired.load() == 1; }));
  log_.Flush();
  EXPECT_EQ(cancelled_fired.load(), 0);
  // Already satisfied: fires at once, on this thread.
  bool now = false;
  log_.WaitFor("proj", 0, [&] { now = true; });
  EXPECT_TRUE(now);
  log_.Stop();  // drops the "other" waiter without calling it
}

TEST_F(EventLogTest, RetentionKeepsTheNewestEvents) {
  EventLog small(*store_, {.max_events = 10, .retention_seconds = 3600});
  for (int i = 0; i < 300; ++i) {
    small.OnNodeStateChanged(MakeNode(NodeState::kReady), NodeState::kStarting);
  }
  small.Flush();
  Result<EventPage> page = small.List("proj", 0, 1000);
  ASSERT_TRUE(page.ok());
  // Pruned every 256 appends: at most 10 + 255 remain, and the newest is kept.
  EXPECT_LE(page->events.size(), 265u);
  EXPECT_GE(page->events.size(), 10u);
  EXPECT_EQ(page->events.back().seq - page->events.front().seq + 1,
            static_cast<int64_t>(page->events.size()));
}

}  // namespace
}  // namespace tpuemu::service
