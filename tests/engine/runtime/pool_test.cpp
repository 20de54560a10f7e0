#include "engine/runtime/pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <string>
#include <vector>

namespace tpuemu::engine {
namespace {

// A one-shot gate tasks can block on, so the test controls when queued work may start.
class Gate {
 public:
  void Open() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    cv_.notify_all();
  }
  void Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return open_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
};

TEST(PoolTest, RunsTasksAndReportsStats) {
  Pool pool(2);
  EXPECT_EQ(pool.threads(), 2);
  std::promise<void> done;
  std::atomic<int> count{0};
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(pool.Submit("job",
                            [&] {
                              if (++count == 10) done.set_value();
                            })
                    .ok());
  }
  ASSERT_EQ(done.get_future().wait_for(std::chrono::seconds(30)), std::future_status::ready);
  EXPECT_EQ(count.load(), 10);
  EXPECT_EQ(pool.GetStats().threads, 2);
}

TEST(PoolTest, GroupsAreServedRoundRobin) {
  Pool pool(1);
  Gate gate;
  std::promise<void> blocked;
  ASSERT_TRUE(pool.Submit("gate",
                          [&] {
                            blocked.set_value();
                            gate.Wait();
                          })
                  .ok());
  blocked.get_future().wait();  // the only worker is now held by the gate task
  std::mutex mu;
  std::vector<std::string> order;
  std::promise<void> all_done;
  const int kBig = 20, kSmall = 5;
  std::atomic<int> remaining{kBig + kSmall};
  auto record = [&](std::string group) {
    return [&, group] {
      {
        std::lock_guard<std::mutex> lock(mu);
        order.push_back(group);
      }
      if (--remaining == 0) all_done.set_value();
    };
  };
  for (int i = 0; i < kBig; ++i) ASSERT_TRUE(pool.Submit("big", record("big")).ok());
  for (int i = 0; i < kSmall; ++i) ASSERT_TRUE(pool.Submit("small", record("small")).ok());
  Pool::Stats stats = pool.GetStats();
  EXPECT_EQ(stats.busy_workers, 1);
  EXPECT_EQ(stats.queued_tasks, kBig + kSmall);
  gate.Open();
  ASSERT_EQ(all_done.get_future().wait_for(std::chrono::seconds(30)), std::future_status::ready);
  std::lock_guard<std::mutex> lock(mu);
  ASSERT_EQ(order.size(), static_cast<size_t>(kBig + kSmall));
  // Strict alternation while both groups have work: big, small, big, small, ...
  for (int i = 0; i < 2 * kSmall; ++i) {
    EXPECT_EQ(order[static_cast<size_t>(i)], i % 2 == 0 ? "big" : "small") << "position " << i;
  }
}

TEST(PoolTest, ParallelForRunsEveryShardOnce) {
  Pool pool(2);
  std::vector<std::atomic<int>> hits(1000);
  pool.ParallelFor("job", 1000, [&](int64_t i) { ++hits[static_cast<size_t>(i)]; });
  for (const auto& h : hits) EXPECT_EQ(h.load(), 1);
}

TEST(PoolTest, ParallelForFromInsideATaskDoesNotDeadlock) {
  Pool pool(2);
  std::promise<int64_t> result;
  // Both workers run a task that itself fans out: without caller participation this deadlocks.
  std::atomic<int64_t> total{0};
  std::atomic<int> finished{0};
  for (int t = 0; t < 2; ++t) {
    ASSERT_TRUE(pool.Submit("outer",
                            [&] {
                              pool.ParallelFor("outer", 64, [&](int64_t i) { total += i; });
                              if (++finished == 2) result.set_value(total.load());
                            })
                    .ok());
  }
  auto f = result.get_future();
  ASSERT_EQ(f.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  EXPECT_EQ(f.get(), 2 * (63 * 64 / 2));
}

TEST(PoolTest, ParallelForOnASingleThreadPoolWithBusyWorker) {
  Gate gate;  // declared first: it must outlive the pool's worker, which may still be inside Wait()
  Pool pool(1);
  std::promise<void> blocked;
  ASSERT_TRUE(pool.Submit("other",
                          [&] {
                            blocked.set_value();
                            gate.Wait();
                          })
                  .ok());
  blocked.get_future().wait();
  std::atomic<int> n{0};
  pool.ParallelFor("job", 10, [&](int64_t) { ++n; });  // the caller runs all shards
  EXPECT_EQ(n.load(), 10);
  gate.Open();
}

TEST(PoolTest, DestructorRunsPendingWork) {
  std::atomic<int> ran{0};
  {
    Gate gate;  // outlives the pool's worker (declared first, destroyed last)
    Pool pool(1);
    std::promise<void> blocked;
    ASSERT_TRUE(pool.Submit("g",
                            [&] {
                              blocked.set_value();
                              gate.Wait();
                            })
                    .ok());
    blocked.get_future().wait();
    for (int i = 0; i < 50; ++i) ASSERT_TRUE(pool.Submit("g", [&] { ++ran; }).ok());
    EXPECT_EQ(pool.GetStats().queued_tasks, 50);
    gate.Open();
  }  // destructor: drains the 50 queued tasks, then joins
  EXPECT_EQ(ran.load(), 50);
}

TEST(PoolTest, SubmitAfterShutdownBeganFails) {
  Pool pool(1);
  Gate gate;
  std::promise<Status> late;
  ASSERT_TRUE(pool.Submit("g",
                          [&] {
                            gate.Wait();
                            late.set_value(pool.Submit("g", [] {}));
                          })
                  .ok());
  std::thread stopper([&] { pool.Shutdown(); });
  // Wait (with a deadline) until shutdown has begun, then let the running task try to submit.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!pool.GetStats().shutting_down && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::yield();
  }
  ASSERT_TRUE(pool.GetStats().shutting_down);
  gate.Open();
  stopper.join();
  EXPECT_EQ(late.get_future().get().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(pool.Submit("g", [] {}).code(), StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace tpuemu::engine
