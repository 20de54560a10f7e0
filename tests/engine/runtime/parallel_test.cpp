#include "engine/runtime/parallel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace tpuemu::engine {
namespace {

TEST(ParallelTest, ChunksCoverEveryIndexOnceWithAndWithoutAPool) {
  Pool pool(3);
  for (Pool* p : {static_cast<Pool*>(nullptr), &pool}) {
    ParallelContext ctx;
    ctx.pool = p;
    std::vector<std::atomic<int>> hits(1000);
    EXPECT_TRUE(ParallelChunks(ctx, 1000, 7, [&](int64_t b, int64_t e) {
      EXPECT_LE(e - b, 7);
      for (int64_t i = b; i < e; ++i) ++hits[static_cast<size_t>(i)];
    }));
    for (const auto& h : hits) EXPECT_EQ(h.load(), 1);
  }
}

TEST(ParallelTest, ThreadCapBoundsTheThreadsUsed) {
  Pool pool(3);
  ParallelContext ctx;
  ctx.pool = &pool;
  EXPECT_EQ(ctx.Threads(), 4);
  ctx.max_threads = 2;
  EXPECT_EQ(ctx.Threads(), 2);
  std::mutex mu;
  std::set<std::thread::id> seen;
  EXPECT_TRUE(ParallelChunks(ctx, 2000, 1, [&](int64_t, int64_t) {
    std::lock_guard<std::mutex> lock(mu);
    seen.insert(std::this_thread::get_id());
  }));
  EXPECT_LE(seen.size(), 2u);
  ctx.max_threads = 1;
  seen.clear();
  EXPECT_TRUE(ParallelChunks(ctx, 100, 1, [&](int64_t, int64_t) {
    std::lock_guard<std::mutex> lock(mu);
    seen.insert(std::this_thread::get_id());
  }));
  EXPECT_EQ(seen, std::set<std::thread::id>{std::this_thread::get_id()});
}

TEST(ParallelTest, StopsHandingOutChunksOnceCancelled) {
  Pool pool(1);
  std::atomic<bool> cancel{false};
  ParallelContext ctx;
  ctx.pool = &pool;
  ctx.cancel.flag = &cancel;
  std::atomic<int> ran{0};
  EXPECT_FALSE(ParallelChunks(ctx, 1000, 1, [&](int64_t, int64_t) {
    if (++ran == 10) cancel = true;
  }));
  EXPECT_LT(ran.load(), 1000);
  EXPECT_EQ(ctx.cancel.Check("here").code(), StatusCode::kCancelled);
}

TEST(ParallelTest, PassedDeadlineStopsBeforeTheFirstChunk) {
  ParallelContext ctx;
  ctx.cancel.deadline = std::chrono::steady_clock::now() - std::chrono::seconds(1);
  int ran = 0;
  EXPECT_FALSE(ParallelChunks(ctx, 10, 1, [&](int64_t, int64_t) { ++ran; }));
  EXPECT_EQ(ran, 0);
  const Status s = ctx.cancel.Check("in op 'x'");
  EXPECT_EQ(s.code(), StatusCode::kDeadlineExceeded);
  EXPECT_EQ(s.message(), "execution deadline exceeded in op 'x'");
}

}  // namespace
}  // namespace tpuemu::engine
