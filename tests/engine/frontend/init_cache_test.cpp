#include "engine/frontend/init_cache.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>

#include "engine/frontend/init_values.h"

namespace tpuemu::engine {
namespace {

TEST(InitCacheTest, RandomInitsAreMaterialisedOnceAndEqualMaterializeInit) {
  InitCache cache(size_t{1} << 20);
  const Init init = Init::Random(7, Init::Distribution::kNormal, 0.5);
  auto first = cache.Get(DType::kF32, {64, 32}, init);
  auto second = cache.Get(DType::kF32, {64, 32}, init);
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ(first->get(), second->get());  // the same shared tensor
  Tensor direct(DType::kF32, {64, 32});
  ASSERT_TRUE(MaterializeInit(init, direct).ok());
  EXPECT_EQ((*first)->f32_values(), direct.f32_values());
  EXPECT_EQ(cache.GetStats().hits, 1);
  EXPECT_EQ(cache.GetStats().misses, 1);
  // Any other seed, shape, dtype or scale is another tensor.
  auto other_seed =
      cache.Get(DType::kF32, {64, 32}, Init::Random(8, Init::Distribution::kNormal, 0.5));
  auto bf16 = cache.Get(DType::kBF16, {64, 32}, init);
  ASSERT_TRUE(other_seed.ok() && bf16.ok());
  EXPECT_NE(other_seed->get(), first->get());
  EXPECT_NE(bf16->get(), first->get());
  EXPECT_EQ((*bf16)->dtype(), DType::kBF16);
}

// A large random init polls the job's cancel token while it draws (a 16.7 M-element one takes a
// few hundred ms): a stopped token ends it with the token's status, and nothing is cached.
TEST(InitCacheTest, AStoppedTokenEndsAMaterialisationAndCachesNothing) {
  InitCache cache(size_t{64} << 20);
  const Init init = Init::Random(5, Init::Distribution::kNormal);
  const Shape shape{1 << 20};
  std::atomic<bool> cancelled{true};
  auto stopped = cache.Get(DType::kF32, shape, init, CancelToken{&cancelled});
  ASSERT_FALSE(stopped.ok());
  EXPECT_EQ(stopped.status().code(), StatusCode::kCancelled) << stopped.status().ToString();
  auto late =
      cache.Get(DType::kF32, shape, init, CancelToken{nullptr, std::chrono::steady_clock::now()});
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(late.status().code(), StatusCode::kDeadlineExceeded) << late.status().ToString();
  EXPECT_EQ(cache.GetStats().cached_bytes, 0u);
  // Without a stop: every value, as MaterializeInit draws them.
  auto full = cache.Get(DType::kF32, shape, init);
  ASSERT_TRUE(full.ok());
  Tensor direct(DType::kF32, shape);
  ASSERT_TRUE(MaterializeInit(init, direct).ok());
  EXPECT_EQ((*full)->f32_values(), direct.f32_values());
}

TEST(InitCacheTest, EvictsLeastRecentlyUsedPastCapacityAndSkipsNonRandomInits) {
  InitCache cache(3 * 1024 * 4);  // three 1024-element f32 tensors
  for (uint64_t seed = 0; seed < 4; ++seed) {
    ASSERT_TRUE(cache.Get(DType::kF32, {1024}, Init::Random(seed)).ok());
  }
  EXPECT_EQ(cache.GetStats().cached_bytes, size_t{3 * 1024 * 4});
  ASSERT_TRUE(cache.Get(DType::kF32, {1024}, Init::Random(3)).ok());  // newest: still there
  EXPECT_EQ(cache.GetStats().hits, 1);
  ASSERT_TRUE(cache.Get(DType::kF32, {1024}, Init::Random(0)).ok());  // oldest: evicted
  EXPECT_EQ(cache.GetStats().hits, 1);
  auto fill = cache.Get(DType::kF32, {4}, Init::Fill(2.5));
  ASSERT_TRUE(fill.ok());
  EXPECT_EQ((*fill)->f32()[3], 2.5f);
  EXPECT_EQ(cache.Get(DType::kF32, {4}, Init{}).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tpuemu::engine
