#include "service/common/write_batcher.h"

#include <gtest/gtest.h>

#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "db/node_repository.h"
#include "tests/support/wait_for.h"

namespace tpuemu::service {
namespace {

db::NodeRow Row(const std::string& id) {
  db::NodeRow r;
  r.name = "projects/p/locations/z/nodes/" + id;
  r.project = "p";
  r.zone = "z";
  r.node_id = id;
  r.uid = "1";
  r.state = "READY";
  r.accelerator_type = "v4-8";
  r.tensorcores = 8;
  r.create_time = r.update_time = "2026-01-01T00:00:00Z";
  r.resource_json = "{}";
  return r;
}

TEST(WriteBatcherTest, FailingBodyRollsBackOnlyItself) {
  std::unique_ptr<db::Store> store = std::move(db::Store::Open(":memory:").value());
  db::NodeRepository nodes(*store);
  WriteBatcher batcher(*store);
  Status failed = batcher.Run([&](db::Txn& txn) -> Status {
    // Writes, then fails: the write must not survive.
    if (!nodes.Insert(txn, Row("half")).ok()) return Status::Internal("insert");
    return Status::FailedPrecondition("changed my mind");
  });
  EXPECT_EQ(failed.code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(batcher
                  .Run([&](db::Txn& txn) -> Status {
                    return nodes.Insert(txn, Row("kept")).ok() ? Status::Ok()
                                                               : Status::Internal("insert");
                  })
                  .ok());
  EXPECT_EQ(nodes.Get("projects/p/locations/z/nodes/half").status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(nodes.Get("projects/p/locations/z/nodes/kept").ok());
}

TEST(WriteBatcherTest, ConcurrentWritersAllCommitAndDuplicatesFailAlone) {
  std::unique_ptr<db::Store> store = std::move(db::Store::Open(":memory:").value());
  db::NodeRepository nodes(*store);
  WriteBatcher batcher(*store);
  std::vector<std::thread> threads;
  std::atomic<int> ok{0}, duplicate{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        // Every id is written twice (by thread t and t^1): exactly one of each pair wins.
        std::string id = "n" + std::to_string(t / 2) + "-" + std::to_string(i);
        Status s = batcher.Run([&](db::Txn& txn) -> Status {
          Result<int64_t> seq = nodes.Insert(txn, Row(id));
          if (!seq.ok()) return Status::AlreadyExists(seq.status().message());
          return Status::Ok();
        });
        (s.ok() ? ok : duplicate)++;
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(ok.load(), 200);
  EXPECT_EQ(duplicate.load(), 200);
  EXPECT_EQ(nodes.List("p", "z", 0, 0)->size(), 200u);
}

TEST(WriteBatcherTest, RunAfterStopIsUnavailable) {
  std::unique_ptr<db::Store> store = std::move(db::Store::Open(":memory:").value());
  WriteBatcher batcher(*store);
  batcher.Stop();
  EXPECT_EQ(batcher.Run([](db::Txn&) { return Status::Ok(); }).code(), StatusCode::kUnavailable);
}

// Issue 26 item 5: Submit queues without waiting; an urgent body (a due transition) runs before
// the ordinary ones queued before it, and QueueDelayMs tells how long the oldest one has waited.
TEST(WriteBatcherTest, SubmitDoesNotWaitAndUrgentBodiesGoFirst) {
  std::unique_ptr<db::Store> store = std::move(db::Store::Open(":memory:").value());
  WriteBatcher batcher(*store, /*max_batch=*/1);  // one body per batch: the order shows
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::promise<void> holding;
  // Holds the batcher thread so that the next bodies queue up behind it.
  batcher.Submit(
      [&](db::Txn&) {
        holding.set_value();
        released.wait();
        return Status::Ok();
      },
      nullptr, nullptr);
  holding.get_future().wait();
  std::mutex mu;
  std::vector<std::string> order;
  std::promise<void> all_done;
  int remaining = 3;
  auto body = [&](const std::string& name) {
    return [&, name](db::Txn&) {
      std::lock_guard lock(mu);
      order.push_back(name);
      return Status::Ok();
    };
  };
  auto done = [&](Status s) {
    EXPECT_TRUE(s.ok()) << s.ToString();
    std::lock_guard lock(mu);
    if (--remaining == 0) all_done.set_value();
  };
  batcher.Submit(body("ordinary-1"), nullptr, done);
  batcher.Submit(body("ordinary-2"), nullptr, done);
  batcher.Submit(body("urgent"), nullptr, done, /*urgent=*/true);
  EXPECT_TRUE(tpuemu::testing::WaitFor([&] { return batcher.QueueDelayMs(false) >= 2; }));
  EXPECT_GE(batcher.QueueDelayMs(true), 0);
  release.set_value();
  all_done.get_future().wait();
  EXPECT_EQ(order, (std::vector<std::string>{"urgent", "ordinary-1", "ordinary-2"}));
  EXPECT_EQ(batcher.QueueDelayMs(false), 0);
  EXPECT_EQ(batcher.QueueDelayMs(true), 0);
  batcher.Stop();
  Status after = Status::Ok();
  batcher.Submit([](db::Txn&) { return Status::Ok(); }, nullptr, [&](Status s) { after = s; });
  EXPECT_EQ(after.code(), StatusCode::kUnavailable);
}

}  // namespace
}  // namespace tpuemu::service
