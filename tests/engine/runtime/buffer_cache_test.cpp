#include "engine/runtime/buffer_cache.h"

#include <gtest/gtest.h>

#include <cstring>
#include <thread>
#include <vector>

namespace tpuemu::engine {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

TEST(BufferCacheTest, ReusesReleasedBlocksOfTheSameSize) {
  BufferCache cache(8 * kMiB);
  void* a = cache.Allocate(2 * kMiB);
  std::memset(a, 1, 2 * kMiB);
  cache.Release(a, 2 * kMiB);
  EXPECT_EQ(cache.GetStats().cached_bytes, 2 * kMiB);
  void* other = cache.Allocate(3 * kMiB);  // different size: fresh block
  EXPECT_NE(other, a);
  void* b = cache.Allocate(2 * kMiB);
  EXPECT_EQ(b, a);
  EXPECT_EQ(cache.GetStats().hits, 1);
  EXPECT_EQ(cache.GetStats().misses, 2);
  EXPECT_EQ(cache.GetStats().cached_bytes, 0u);
  cache.Release(b, 2 * kMiB);
  cache.Release(other, 3 * kMiB);
}

TEST(BufferCacheTest, SmallBlocksBypassAndCapacityEvictsOldest) {
  BufferCache cache(4 * kMiB);
  void* small = cache.Allocate(1024);
  cache.Release(small, 1024);
  EXPECT_EQ(cache.GetStats().cached_bytes, 0u);
  void* x = cache.Allocate(2 * kMiB);
  void* y = cache.Allocate(2 * kMiB);
  void* z = cache.Allocate(2 * kMiB);
  cache.Release(x, 2 * kMiB);
  cache.Release(y, 2 * kMiB);
  cache.Release(z, 2 * kMiB);  // 6 MiB > 4 MiB: x is evicted
  EXPECT_EQ(cache.GetStats().cached_bytes, 4 * kMiB);
  void* again = cache.Allocate(2 * kMiB);
  EXPECT_EQ(again, z);  // most recently released first
  cache.Release(again, 2 * kMiB);
}

TEST(BufferCacheTest, ConcurrentUseIsSafe) {
  BufferCache cache(16 * kMiB);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 100; ++i) {
        void* p = cache.Allocate(kMiB * static_cast<size_t>(1 + i % 3));
        static_cast<char*>(p)[0] = 1;
        cache.Release(p, kMiB * static_cast<size_t>(1 + i % 3));
      }
    });
  }
  for (auto& th : threads) th.join();
  const auto stats = cache.GetStats();
  EXPECT_EQ(stats.hits + stats.misses, 400);
  EXPECT_GT(stats.hits, 0);
  EXPECT_LE(stats.cached_bytes, 16 * kMiB);
}

}  // namespace
}  // namespace tpuemu::engine
