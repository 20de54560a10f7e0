#include "engine/frontend/compile_cache.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>

namespace tpuemu::engine {
namespace {

Slice SliceOf(const char* name) { return *Slice::FromAcceleratorType(name); }

Graph Program(int64_t batch, uint64_t seed = 1) {
  Graph g("mlp");
  g.Parameter("x", {batch, 32});
  g.Constant("w", {32, 8}, Init::Random(seed));
  g.Relu("r", g.Dot("y", "x", "w"));
  g.MarkOutput("r");
  return g;
}

TEST(CompileCacheTest, RepeatHitsChangedShapeMisses) {
  CompileCache cache;
  const Slice slice = SliceOf("v4-8");
  auto first = cache.GetOrCompile(Program(64), slice, {});
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_FALSE(first->hit);
  EXPECT_GE(first->compile_seconds, 0);
  auto again = cache.GetOrCompile(Program(64), slice, {});
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->hit);
  EXPECT_EQ(again->program, first->program);  // the very same executable
  EXPECT_EQ(again->compile_seconds, 0);
  auto reshaped = cache.GetOrCompile(Program(65), slice, {});
  ASSERT_TRUE(reshaped.ok());
  EXPECT_FALSE(reshaped->hit);
  EXPECT_NE(reshaped->program, first->program);
  const auto stats = cache.GetStats();
  EXPECT_EQ(stats.hits, 1);
  EXPECT_EQ(stats.misses, 2);
  EXPECT_EQ(stats.entries, 2);
}

TEST(CompileCacheTest, ConstantValuesAreNotPartOfTheKey) {
  CompileCache cache;
  const Slice slice = SliceOf("v4-8");
  ASSERT_FALSE(cache.GetOrCompile(Program(64, 1), slice, {})->hit);
  EXPECT_TRUE(cache.GetOrCompile(Program(64, 12345), slice, {})->hit);
}

TEST(CompileCacheTest, PrecisionGenerationAndOptionsArePartOfTheKey) {
  CompileCache cache;
  ASSERT_FALSE(cache.GetOrCompile(Program(64), SliceOf("v4-8"), {})->hit);
  CompileOptions highest;
  highest.precision = Precision::kHighest;
  EXPECT_FALSE(cache.GetOrCompile(Program(64), SliceOf("v4-8"), highest)->hit);
  EXPECT_FALSE(cache.GetOrCompile(Program(64), SliceOf("v5litepod-4"), {})->hit);
  EXPECT_TRUE(cache.GetOrCompile(Program(64), SliceOf("v4-32"), {})->hit);  // same generation
  CompileOptions two;
  two.tensorcores = 2;
  EXPECT_FALSE(cache.GetOrCompile(Program(64), SliceOf("v4-8"), two)->hit);
  CompileOptions scalesim;
  scalesim.timing_mode = TimingMode::kScaleSim;
  EXPECT_FALSE(cache.GetOrCompile(Program(64), SliceOf("v4-8"), scalesim)->hit);
  EXPECT_EQ(cache.GetStats().misses, 5);
  EXPECT_EQ(cache.GetStats().hits, 1);
}

TEST(CompileCacheTest, EvictsLeastRecentlyUsed) {
  CompileCache cache(2);
  const Slice slice = SliceOf("v4-8");
  ASSERT_TRUE(cache.GetOrCompile(Program(1), slice, {}).ok());
  ASSERT_TRUE(cache.GetOrCompile(Program(2), slice, {}).ok());
  EXPECT_TRUE(cache.GetOrCompile(Program(1), slice, {})->hit);  // 1 is now most recent
  ASSERT_TRUE(cache.GetOrCompile(Program(3), slice, {}).ok());  // evicts 2
  EXPECT_TRUE(cache.GetOrCompile(Program(1), slice, {})->hit);
  EXPECT_FALSE(cache.GetOrCompile(Program(2), slice, {})->hit);
  EXPECT_EQ(cache.GetStats().evictions, 2);
  EXPECT_EQ(cache.GetStats().entries, 2);
}

TEST(CompileCacheTest, ErrorsAreNotCachedAndOptionsAreCheckedOnHits) {
  CompileCache cache;
  Graph bad;
  bad.Relu("r", "missing");
  EXPECT_EQ(cache.GetOrCompile(bad, SliceOf("v4-8"), {}).status().code(),
            StatusCode::kInvalidArgument);
  CompileOptions eight;
  eight.tensorcores = 8;
  ASSERT_TRUE(cache.GetOrCompile(Program(8), SliceOf("v4-32"), eight).ok());
  // A v4-32 has 16 TensorCores, a v4-8 only 8: a hit must not bypass that check.
  CompileOptions sixteen;
  sixteen.tensorcores = 16;
  ASSERT_TRUE(cache.GetOrCompile(Program(8), SliceOf("v4-32"), sixteen).ok());
  EXPECT_EQ(cache.GetOrCompile(Program(8), SliceOf("v4-8"), sixteen).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(cache.GetStats().entries, 2);
}

TEST(CompileCacheTest, ConcurrentLookupsAreConsistent) {
  CompileCache cache;
  const Slice slice = SliceOf("v4-8");
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        auto r = cache.GetOrCompile(Program(1 + (i + t) % 5), slice, {});
        ASSERT_TRUE(r.ok());
      }
    });
  }
  for (auto& th : threads) th.join();
  const auto stats = cache.GetStats();
  EXPECT_EQ(stats.hits + stats.misses, 200);
  EXPECT_EQ(stats.entries, 5);
  EXPECT_GE(stats.misses, 5);
}

}  // namespace
}  // namespace tpuemu::engine
