#include "service/common/write_batcher.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "db/node_repository.h"

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

}  // namespace
}  // namespace tpuemu::service
