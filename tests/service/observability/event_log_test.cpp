// EventLog: node and job transitions become ordered, durable events, written in the transaction of
// the change (a rolled-back change leaves no event); List pages by seq; WaitFor fires once an event
// past `since` is published (now or later) and CancelWait drops a waiter.
#include "service/observability/event_log.h"

#include <gtest/gtest.h>

#include <atomic>

#include "service/jobs/job_event.h"
#include "service/nodes/node_event.h"

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
  // A change of its own, as a manager writes it: the event in the transaction, published after.
  void Commit(db::EventRow event) {
    PendingEvents events(&log_);
    ASSERT_TRUE(store_->Transaction([&](db::Txn& txn) { return events.Append(txn, event); }).ok());
    events.Publish();
  }

  std::unique_ptr<db::Store> store_ = std::move(db::Store::Open(":memory:").value());
  EventLog log_{*store_};
};

TEST_F(EventLogTest, NodeAndJobTransitionsInOrder) {
  Commit(NodeEvent(MakeNode(NodeState::kCreating), NodeState::kUnspecified));
  Commit(NodeEvent(MakeNode(NodeState::kReady), NodeState::kCreating));
  Commit(JobEvent(MakeJob(JobState::kQueued), std::nullopt));
  Job done = MakeJob(JobState::kSucceeded);
  done.exit_code = 0;
  done.reason = "completed 1 steps";
  Commit(JobEvent(done, JobState::kRunning));
  Commit(NodeEvent(MakeNode(NodeState::kUnspecified), NodeState::kDeleting));

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

TEST_F(EventLogTest, ARolledBackChangeLeavesNoEventAndWakesNoOne) {
  std::atomic<int> fired{0};
  log_.WaitFor("proj", 0, [&] { ++fired; });
  PendingEvents events(&log_);
  Status s = store_->Transaction([&](db::Txn& txn) -> Status {
    TPUEMU_RETURN_IF_ERROR(
        events.Append(txn, NodeEvent(MakeNode(NodeState::kReady), NodeState::kCreating)));
    return Status::Unavailable("the change failed after its event was appended");
  });
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  log_.Flush();
  EXPECT_TRUE(log_.List("proj", 0, 0)->events.empty());
  EXPECT_EQ(fired.load(), 0);
  // The next committed event takes the seq the rolled-back one would have had: no gap.
  Commit(NodeEvent(MakeNode(NodeState::kReady), NodeState::kCreating));
  EXPECT_TRUE(testing::WaitFor([&] { return fired.load() == 1; }));
  Result<EventPage> page = log_.List("proj", 0, 0);
  ASSERT_EQ(page->events.size(), 1u);
  EXPECT_EQ(page->events[0].seq, 1);
}

TEST_F(EventLogTest, RecordWritesAFaultOfEveryProject) {
  db::EventRow capacity;
  capacity.project = "*";
  capacity.kind = "fault";
  capacity.resource = "zones/us-central2-b";
  capacity.zone = "us-central2-b";
  capacity.state = "CAPACITY";
  capacity.message = "zone us-central2-b capacity is now 0 TensorCores (0 in use)";
  std::atomic<int> fired{0};
  log_.WaitFor("any-project", 0, [&] { ++fired; });
  ASSERT_TRUE(log_.Record(capacity).ok());
  EXPECT_TRUE(testing::WaitFor([&] { return fired.load() == 1; }));
  Result<EventPage> page = log_.List("any-project", 0, 0);
  ASSERT_EQ(page->events.size(), 1u);
  EXPECT_EQ(page->events[0].state, "CAPACITY");
  EXPECT_FALSE(page->events[0].time.empty());
}

TEST_F(EventLogTest, WaitForFiresAfterTheNextEventAndCancelDrops) {
  std::atomic<int> fired{0};
  std::atomic<int> cancelled_fired{0};
  log_.WaitFor("proj", 0, [&] { ++fired; });
  uint64_t dropped = log_.WaitFor("proj", 0, [&] { ++cancelled_fired; });
  log_.CancelWait(dropped);
  log_.WaitFor("other", 0, [&] { ADD_FAILURE() << "another project's event woke this"; });
  EXPECT_EQ(fired.load(), 0);
  Commit(NodeEvent(MakeNode(NodeState::kCreating), NodeState::kUnspecified));
  EXPECT_TRUE(testing::WaitFor([&] { return fired.load() == 1; }));
  log_.Flush();
  EXPECT_EQ(cancelled_fired.load(), 0);
  // Already satisfied: fires at once, on this thread.
  bool now = false;
  log_.WaitFor("proj", 0, [&] { now = true; });
  EXPECT_TRUE(now);
  log_.Stop();  // drops the "other" waiter without calling it
}

}  // namespace
}  // namespace tpuemu::service
