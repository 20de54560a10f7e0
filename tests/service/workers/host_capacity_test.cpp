#include "service/workers/host_capacity.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

namespace tpuemu::service {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;

TEST(HostCapacityTest, ReservesUpToEachBudgetAndNamesTheOneThatRanOut) {
  HostCapacity workers({.workers = 4}, {});
  EXPECT_TRUE(workers.Reserve("a", 3).ok());
  Status full = workers.Reserve("b", 2);
  EXPECT_EQ(full.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(full.message().find("--worker-max 4 is spent: 3 sandboxed workers hold 3 workers, 2 "
                                "more asked"),
            std::string::npos)
      << full.message();
  EXPECT_TRUE(workers.Reserve("b", 1).ok());
  EXPECT_EQ(workers.held_workers(), 4);

  HostCapacity memory({.workers = 100, .memory_bytes = 10 * kGiB, .pids = 1 << 20},
                      {.memory_bytes = 4 * kGiB, .pids = 4096});
  EXPECT_TRUE(memory.Reserve("a", 2).ok());
  Status out = memory.Reserve("b", 1);
  EXPECT_NE(out.message().find("--worker-memory-budget-bytes 10737418240 is spent"),
            std::string::npos)
      << out.message();

  HostCapacity pids({.pids = 10000}, {.memory_bytes = 4 * kGiB, .pids = 4096});
  EXPECT_TRUE(pids.Reserve("a", 2).ok());
  EXPECT_NE(pids.Reserve("b", 1).message().find("--worker-pids-budget 10000"), std::string::npos);

  HostCapacity disk({.disk_bytes = 150 * kGiB}, {.disk_bytes = 100 * kGiB});
  EXPECT_TRUE(disk.Reserve("a", 1).ok());
  EXPECT_NE(disk.Reserve("b", 1).message().find("--worker-disk-budget-bytes"), std::string::npos);
}

TEST(HostCapacityTest, ZeroMeansNoBudgetAndAFailedReserveHoldsNothing) {
  HostCapacity none({}, {.memory_bytes = 4 * kGiB, .pids = 4096, .disk_bytes = 100 * kGiB});
  EXPECT_TRUE(none.Reserve("a", 10000).ok());
  HostCapacity c({.workers = 2}, {});
  EXPECT_FALSE(c.Reserve("big", 3).ok());  // a node larger than the host never fits
  EXPECT_EQ(c.held_workers(), 0);
  EXPECT_EQ(c.Release("big"), 0);
}

TEST(HostCapacityTest, ReleaseFreesWhatAHolderHeldAndClearForgetsAll) {
  HostCapacity c({.workers = 4}, {});
  ASSERT_TRUE(c.Reserve("a", 2).ok());
  ASSERT_TRUE(c.Reserve("b", 2).ok());
  EXPECT_FALSE(c.Reserve("c", 1).ok());
  EXPECT_EQ(c.Release("a"), 2);
  EXPECT_EQ(c.Release("a"), 0);  // twice: nothing more
  EXPECT_TRUE(c.Reserve("c", 2).ok());
  c.Clear();
  EXPECT_EQ(c.held_workers(), 0);
  c.Restore("old", 5);  // a restart: what exists is held even past the budget
  EXPECT_EQ(c.held_workers(), 5);
  EXPECT_FALSE(c.Reserve("d", 1).ok());
}

TEST(HostCapacityTest, AQueuedResourceHoldsForItsNodesWhichTakeTheirShare) {
  HostCapacity c({.workers = 4}, {});
  const std::string qr = QueuedResourceHolder("projects/p/locations/z/queuedResources/q");
  ASSERT_TRUE(c.Reserve(qr, 4).ok());
  EXPECT_FALSE(c.Reserve("other", 1).ok());  // held for the queued resource's nodes
  EXPECT_TRUE(c.Move(qr, "node-0", 2));
  EXPECT_TRUE(c.Move(qr, "node-1", 2));
  EXPECT_FALSE(c.Move(qr, "node-2", 1));  // nothing left: that create reserves its own
  EXPECT_EQ(c.Release(qr), 0);
  EXPECT_EQ(c.held_workers(), 4);
  EXPECT_EQ(c.Release("node-0"), 2);
  EXPECT_EQ(c.held_workers(), 2);
}

TEST(HostCapacityTest, RacingReservationsNeverPassTheBudget) {
  HostCapacity c({.workers = 100, .memory_bytes = 50 * kGiB}, {.memory_bytes = kGiB});
  std::atomic<int> granted{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 100; ++i) {
        if (c.Reserve(std::to_string(t) + "-" + std::to_string(i), 1).ok()) ++granted;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(granted.load(), 50);
  EXPECT_EQ(c.held_workers(), 50);
}

}  // namespace
}  // namespace tpuemu::service
