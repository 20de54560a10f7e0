// JobBoard: one run per node started on the pool in the queues' order, the next on Release; an
// ended job written and its waiters woken before FinishEnded returns (a running one kept until its
// run finishes); Shutdown waits for the runs under way.
#include "service/jobs/job_board.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace tpuemu::service {
namespace {

using namespace std::chrono_literals;

class JobBoardTest : public ::testing::Test {
 protected:
  JobBoardTest() {
    // The runs only claim their job (QUEUED -> RUNNING in the store) and report that they
    // started; each test releases them.
    board_.SetStartRun([this](const std::string&, const std::string& name) {
      ClaimResult claim = ClaimResult::kGone;
      (void)records_.Claim(name, &claim);
      std::lock_guard lock(mu_);
      started_.push_back(name);
      changed_.notify_all();
    });
  }

  // The full name of node `id` (project p, zone z).
  static std::string Node(const std::string& id = "n") {
    return "projects/p/locations/z/nodes/" + id;
  }
  // Job `id` inserted QUEUED on Node(`node`) and queued on the board (not started).
  Job Queue(const std::string& id, const std::string& node = "n", int64_t priority = 0) {
    Job job;
    job.project = "p";
    job.zone = "z";
    job.node_id = node;
    job.job_id = id;
    job.name = job.NodeName() + "/jobs/" + id;
    job.priority = priority;
    job.spec_hash = "h";
    job.create_time = "2026-01-01T00:00:00.000000Z";
    bool inserted = false;
    Job stored = *records_.InsertOrReplay(std::move(job), &inserted);
    JobBoard::Locked(board_).Enqueue(stored.NodeName(), stored,
                                     ActiveJob::Queued(stored, Status::Internal("no spec"), 0, {}));
    return stored;
  }
  void Pump(const std::string& node) {
    JobBoard::Locked(board_).Pump(node);
    board_.FlushLines();
  }
  // The names of the runs started so far, once there are `count` (sorted: nodes run at once).
  std::vector<std::string> Started(size_t count) {
    std::unique_lock lock(mu_);
    EXPECT_TRUE(changed_.wait_for(lock, 10s, [&] { return started_.size() >= count; }))
        << started_.size() << " of " << count << " runs started";
    std::vector<std::string> names = started_;
    std::sort(names.begin(), names.end());
    return names;
  }
  JobState Stored(const Job& job) { return records_.Get(job.name)->state; }

  std::unique_ptr<db::Store> store_ = std::move(db::Store::Open(":memory:").value());
  JobRecords records_{*store_};
  JobWaiters waiters_;
  engine::Pool pool_{2};
  JobBoard board_{records_, waiters_, pool_, /*budget_bytes=*/0};
  std::mutex mu_;
  std::condition_variable changed_;
  std::vector<std::string> started_;  // guarded by mu_
};

TEST_F(JobBoardTest, StartsOneRunPerNodeInTheQueuesOrderAndTheNextOnRelease) {
  const Job low = Queue("low");
  const Job high = Queue("high", "n", /*priority=*/5);
  const Job other = Queue("other", "a");
  Pump(Node());
  Pump(Node());  // the node already runs a job: starts nothing
  Pump(Node("a"));
  EXPECT_EQ(Started(2), (std::vector<std::string>{other.name, high.name}));
  EXPECT_EQ(JobBoard::Locked(board_).queues().Running(Node()), high.name);
  EXPECT_EQ(Stored(high), JobState::kRunning);
  EXPECT_EQ(Stored(low), JobState::kQueued);

  board_.Finish(high.name, Ended(JobState::kSucceeded, "done"), nlohmann::json::object());
  board_.Release(Node());
  EXPECT_EQ(Started(3), (std::vector<std::string>{other.name, high.name, low.name}));
  EXPECT_EQ(Stored(high), JobState::kSucceeded);
  EXPECT_FALSE(JobBoard::Locked(board_).Has(high.name)) << "finished: off the board";
  EXPECT_TRUE(JobBoard::Locked(board_).Has(low.name));
  board_.Release(Node());
  board_.Release(Node("a"));
}

TEST_F(JobBoardTest, AnEndedQueuedJobIsWrittenAndItsWaitersWokenBeforeFinishEndedReturns) {
  const Job running = Queue("running");
  const Job queued = Queue("queued");
  Pump(Node());
  ASSERT_EQ(Started(1), std::vector<std::string>{running.name});
  std::optional<Result<Job>> woken;
  std::vector<JobBoard::PendingEnd> ended;
  {
    JobBoard::Locked board(board_);
    board.AddWaiter(queued.name, [&](Result<Job> job) { woken = std::move(job); });
    board.End(queued.name, "cancelled by the user", JobState::kCancelled, &ended);
    board.End(Node() + "/jobs/unknown", "cancelled by the user", JobState::kCancelled, &ended);
  }
  ASSERT_EQ(ended.size(), 1u) << "a job not on the board is not ended here";
  EXPECT_FALSE(ended[0].running);
  EXPECT_EQ(Stored(queued), JobState::kQueued) << "written by FinishEnded, not by End";

  ASSERT_TRUE(board_.FinishEnded(ended).ok());
  EXPECT_EQ(Stored(queued), JobState::kCancelled);
  ASSERT_TRUE(woken.has_value() && woken->ok());
  EXPECT_EQ((*woken)->state, JobState::kCancelled);
  EXPECT_EQ((*woken)->exit_code, ExitCodeOf(JobState::kCancelled));
  JobBoard::Locked board(board_);
  EXPECT_FALSE(board.Has(queued.name));
  EXPECT_EQ(board.queues().Jobs(Node()), std::vector<std::string>{running.name});
}

TEST_F(JobBoardTest, AnEndedRunningJobStaysOnTheBoardUntilItsRunFinishes) {
  const Job job = Queue("j");
  Pump(Node());
  ASSERT_EQ(Started(1), std::vector<std::string>{job.name});
  std::shared_ptr<ActiveJob> active = JobBoard::Locked(board_).Find(job.name);
  ASSERT_NE(active, nullptr);
  std::optional<Result<Job>> woken;
  std::vector<JobBoard::PendingEnd> ended;
  {
    JobBoard::Locked board(board_);
    board.AddWaiter(job.name, [&](Result<Job> j) { woken = std::move(j); });
    board.End(job.name, "node n was preempted", JobState::kFailed, &ended);
  }
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_TRUE(ended[0].running);
  EXPECT_TRUE(active->cancel.requested()) << "the run stops at its next op boundary";
  ASSERT_TRUE(board_.FinishEnded(ended).ok());
  EXPECT_EQ(Stored(job), JobState::kFailed) << "terminal in the store before the run stopped";
  EXPECT_TRUE(JobBoard::Locked(board_).Has(job.name));
  EXPECT_FALSE(woken.has_value()) << "its run wakes the waiters when it finishes";

  // The run stops: its terminal write finds the job ended and keeps the first outcome.
  board_.Finish(job.name, active->cancel.Outcome(), nlohmann::json());
  ASSERT_TRUE(woken.has_value() && woken->ok());
  EXPECT_EQ((*woken)->state, JobState::kFailed);
  EXPECT_EQ((*woken)->reason, "node n was preempted");
  EXPECT_FALSE(JobBoard::Locked(board_).Has(job.name));
  board_.Release(Node());
}

TEST_F(JobBoardTest, ShutdownInterruptsTheRunsAndWaitsForThem) {
  std::atomic<bool> released{false};
  board_.SetStartRun([&](const std::string& node, const std::string& name) {
    std::shared_ptr<ActiveJob> active = JobBoard::Locked(board_).Find(name);
    while (!active->cancel.requested()) std::this_thread::sleep_for(1ms);
    std::this_thread::sleep_for(50ms);  // a run that takes a while to stop
    released = true;
    board_.Release(node);
  });
  Queue("j");
  const Job next = Queue("next");
  Pump(Node());
  for (int i = 0; i < 10000 && JobBoard::Locked(board_).queues().Running(Node()).empty(); ++i) {
    std::this_thread::sleep_for(1ms);
  }
  ASSERT_FALSE(JobBoard::Locked(board_).queues().Running(Node()).empty())
      << "the run did not start";
  board_.Shutdown();
  EXPECT_TRUE(released) << "Shutdown returned before the run released its node";
  JobBoard::Locked board(board_);
  EXPECT_TRUE(board.queues().closed());
  EXPECT_FALSE(board.Has(next.name)) << "the queues are forgotten; the store keeps the job";
  EXPECT_EQ(Stored(next), JobState::kQueued);
  EXPECT_EQ(board.queues().Running(Node()), "") << "Release after shutdown starts nothing";
}

}  // namespace
}  // namespace tpuemu::service
