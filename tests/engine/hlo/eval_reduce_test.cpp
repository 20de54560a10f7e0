// Ops that apply a computation: reduce (any reducer, several operands), reduce-window,
// select-and-scatter, sort, topk, map, batch-norm — against hand-computed results.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>

#include "tests/engine/hlo/hlo_test_util.h"

namespace tpuemu::engine::hlo {
namespace {

using testing::F32;
using testing::Floats;
using testing::Ints;
using testing::MustRun;

constexpr const char* kAdd = R"(add { a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b) }
max { a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b) }
)";

TEST(HloEvalReduce, SumOverDimensions) {
  const std::string text = std::string("HloModule m\n") + kAdd + R"(ENTRY e {
  x = f32[2,3] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[3] reduce(x, z), dimensions={0}, to_apply=add
})";
  EXPECT_EQ(Floats(MustRun(text, {F32({2, 3}, {1, 2, 3, 4, 5, 6})})),
            (std::vector<float>{5, 7, 9}));
}

TEST(HloEvalReduce, FoldsFromTheInitInRowMajorOrder) {
  // A non-commutative reducer shows the order: ((10 - 1) - 2) - 3.
  const std::string text = R"(HloModule m
sub { a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] subtract(a, b) }
ENTRY e {
  x = f32[3] parameter(0)
  init = f32[] constant(10)
  ROOT r = f32[] reduce(x, init), dimensions={0}, to_apply=sub
})";
  EXPECT_EQ(Floats(MustRun(text, {F32({3}, {1, 2, 3})})), std::vector<float>{4});
}

TEST(HloEvalReduce, RowAndColumnFoldsKeepTheRowMajorOrder) {
  // Reductions over trailing dims (a softmax's row sums) and leading dims (a bias gradient's
  // column sums) take the f32 fast paths; each output must still fold its elements from the
  // init in row-major order, bit for bit (ten rows: eight folded side by side, two alone), and a
  // max must keep a NaN.
  const std::string text = std::string("HloModule m\n") + kAdd + R"(ENTRY e {
  x = f32[10,5,7] parameter(0)
  z = f32[] constant(0.1)
  lo = f32[] constant(-inf)
  rows = f32[10] reduce(x, z), dimensions={1,2}, to_apply=add
  cols = f32[7] reduce(x, z), dimensions={0,1}, to_apply=add
  mid = f32[10,7] reduce(x, z), dimensions={1}, to_apply=add
  mx = f32[10,5] reduce(x, lo), dimensions={2}, to_apply=max
  ROOT t = (f32[10], f32[7], f32[10,7], f32[10,5]) tuple(rows, cols, mid, mx)
})";
  std::vector<float> v(10 * 5 * 7);
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(static_cast<float>(i) * 1.3f) * 1e3f;
  v[3 * 35 + 2 * 7 + 4] = std::nanf("");
  const Value out = MustRun(text, {F32({10, 5, 7}, v)});
  ASSERT_EQ(out.elements.size(), 4u);
  auto at = [&](int i, int j, int k) { return v[static_cast<size_t>((i * 5 + j) * 7 + k)]; };
  std::vector<float> rows, cols, mid, mx;
  for (int i = 0; i < 10; ++i) {
    float acc = 0.1f;
    for (int j = 0; j < 5; ++j)
      for (int k = 0; k < 7; ++k) acc += at(i, j, k);
    rows.push_back(acc);
  }
  for (int k = 0; k < 7; ++k) {
    float acc = 0.1f;
    for (int i = 0; i < 10; ++i)
      for (int j = 0; j < 5; ++j) acc += at(i, j, k);
    cols.push_back(acc);
  }
  for (int i = 0; i < 10; ++i) {
    for (int k = 0; k < 7; ++k) {
      float acc = 0.1f;
      for (int j = 0; j < 5; ++j) acc += at(i, j, k);
      mid.push_back(acc);
    }
  }
  auto bits = [](const std::vector<float>& xs) {
    std::vector<uint32_t> b;
    for (float x : xs) b.push_back(std::bit_cast<uint32_t>(x));
    return b;
  };
  EXPECT_EQ(bits(Floats(out.elements[0])), bits(rows));
  EXPECT_EQ(bits(Floats(out.elements[1])), bits(cols));
  EXPECT_EQ(bits(Floats(out.elements[2])), bits(mid));
  const std::vector<float> got_max = Floats(out.elements[3]);
  for (int i = 0; i < 10; ++i) {
    for (int j = 0; j < 5; ++j) {
      float want = -INFINITY;
      bool nan = false;
      for (int k = 0; k < 7; ++k) {
        nan = nan || std::isnan(at(i, j, k));
        want = std::max(want, at(i, j, k));
      }
      const float got = got_max[static_cast<size_t>(i * 5 + j)];
      if (nan) {
        EXPECT_TRUE(std::isnan(got)) << i << "," << j;
      } else {
        EXPECT_EQ(got, want) << i << "," << j;
      }
    }
  }
}

TEST(HloEvalReduce, RowMaxAndMinAreTheInOrderFoldsBitForBit) {
  // The row max/min fast path folds in any order; its result must still be the in-order fold's
  // bits: a zero extreme's sign depends on the order (max(-0, +0) keeps the first), a NaN gives
  // the canonical NaN, and rows longer and shorter than a vector of lanes.
  const std::string text = std::string("HloModule m\n") + kAdd + R"(min { a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] minimum(a, b) }
ENTRY e {
  x = f32[9,37] parameter(0)
  lo = f32[] constant(-inf)
  hi = f32[] constant(inf)
  mx = f32[9] reduce(x, lo), dimensions={1}, to_apply=max
  mn = f32[9] reduce(x, hi), dimensions={1}, to_apply=min
  ROOT t = (f32[9], f32[9]) tuple(mx, mn)
})";
  std::vector<float> v(9 * 37);
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(static_cast<float>(i) * 0.7f) * 50.0f;
  auto row = [&](int r) { return v.begin() + r * 37; };
  std::fill(row(1), row(2), -3.0f);  // all negative but two zeros: the max is a zero
  row(1)[5] = -0.0f;
  row(1)[30] = 0.0f;
  std::fill(row(2), row(3), 2.0f);  // all positive but two zeros: the min is a zero
  row(2)[4] = 0.0f;
  row(2)[33] = -0.0f;
  row(3)[36] = std::nanf("");  // a NaN in the lanes' tail
  row(4)[0] = std::nanf("");
  row(5)[20] = INFINITY;
  row(5)[21] = -INFINITY;
  std::fill(row(6), row(7), -INFINITY);  // the init is the extreme
  row(7)[17] = std::numeric_limits<float>::denorm_min();
  const Value out = MustRun(text, {F32({9, 37}, v)});
  ASSERT_EQ(out.elements.size(), 2u);
  auto fold = [&](int r, float init, bool is_max) {
    float acc = init;
    for (int k = 0; k < 37; ++k) {
      const float e = row(r)[k];
      acc = std::isnan(acc) || std::isnan(e) ? std::nanf("")
            : is_max                         ? std::max(acc, e)
                                             : std::min(acc, e);
    }
    return std::bit_cast<uint32_t>(acc);
  };
  const std::vector<float> mx = Floats(out.elements[0]), mn = Floats(out.elements[1]);
  for (int r = 0; r < 9; ++r) {
    EXPECT_EQ(std::bit_cast<uint32_t>(mx[static_cast<size_t>(r)]), fold(r, -INFINITY, true)) << r;
    EXPECT_EQ(std::bit_cast<uint32_t>(mn[static_cast<size_t>(r)]), fold(r, INFINITY, false)) << r;
  }
  // The zero rows: the first zero met wins the tie.
  EXPECT_TRUE(std::signbit(mx[1]));
  EXPECT_FALSE(std::signbit(mn[2]));
}

TEST(HloEvalReduce, VariadicArgmax) {
  const std::string text = R"(HloModule m
argmax {
  v0 = f32[] parameter(0)
  i0 = s32[] parameter(1)
  v1 = f32[] parameter(2)
  i1 = s32[] parameter(3)
  gt = pred[] compare(v1, v0), direction=GT
  v = f32[] select(gt, v1, v0)
  i = s32[] select(gt, i1, i0)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
ENTRY e {
  x = f32[2,4] parameter(0)
  idx = s32[2,4] iota(), iota_dimension=1
  ninf = f32[] constant(-inf)
  neg = s32[] constant(-1)
  ROOT r = (f32[2], s32[2]) reduce(x, idx, ninf, neg), dimensions={1}, to_apply=argmax
})";
  const Value out = MustRun(text, {F32({2, 4}, {3, 9, 2, 9, -1, -5, -0.5f, -7})});
  EXPECT_EQ(Floats(out.elements[0]), (std::vector<float>{9, -0.5f}));
  EXPECT_EQ(testing::Integers(out.elements[1]), (std::vector<int64_t>{1, 2}));
}

TEST(HloEvalReduce, Bf16AccumulatorRoundsEveryStep) {
  const std::string text = R"(HloModule m
add { a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT s = bf16[] add(a, b) }
ENTRY e {
  x = bf16[3] parameter(0)
  z = bf16[] constant(0)
  ROOT r = bf16[] reduce(x, z), dimensions={0}, to_apply=add
})";
  // 256 + 1 = 257 rounds to 256 in bf16, twice.
  EXPECT_EQ(Floats(MustRun(text, {F32({3}, {256, 1, 1}, PrimitiveType::kBF16)})),
            std::vector<float>{256});
}

TEST(HloEvalReduceWindow, MaxPoolWithStrideAndPadding) {
  const std::string text = std::string("HloModule m\n") + kAdd + R"(ENTRY e {
  x = f32[4,4] parameter(0)
  ninf = f32[] constant(-inf)
  ROOT r = f32[2,2] reduce-window(x, ninf), window={size=2x2 stride=2x2}, to_apply=max
})";
  EXPECT_EQ(
      Floats(MustRun(text, {F32({4, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})})),
      (std::vector<float>{6, 8, 14, 16}));
  // XLA's doc example: min over size 3, stride 2, SAME-style padding of [10000,1000,100,10,1].
  const std::string padded = R"(HloModule m
min { a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] minimum(a, b) }
ENTRY e {
  x = f32[5] parameter(0)
  big = f32[] constant(inf)
  ROOT r = f32[3] reduce-window(x, big), window={size=3 stride=2 pad=1_1}, to_apply=min
})";
  EXPECT_EQ(Floats(MustRun(padded, {F32({5}, {10000, 1000, 100, 10, 1})})),
            (std::vector<float>{1000, 10, 1}));
  const std::string dilated = std::string("HloModule m\n") + kAdd + R"(ENTRY e {
  x = f32[3] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[4] reduce-window(x, z), window={size=2 lhs_dilate=2}, to_apply=add
})";
  // dilated input 1 _ 2 _ 3: window sums skip the holes.
  EXPECT_EQ(Floats(MustRun(dilated, {F32({3}, {1, 2, 3})})), (std::vector<float>{1, 2, 2, 3}));
}

TEST(HloEvalSelectAndScatter, GradientOfMaxPoolGoesToTheWinner) {
  const std::string text = R"(HloModule m
ge { a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT g = pred[] compare(a, b), direction=GE }
add { a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b) }
ENTRY e {
  x = f32[4] parameter(0)
  src = f32[3] parameter(1)
  z = f32[] constant(0)
  ROOT r = f32[4] select-and-scatter(x, src, z), window={size=2}, select=ge, scatter=add
})";
  // windows [1,5] [5,2] [2,7]: winners at 1, 1, 3.
  EXPECT_EQ(Floats(MustRun(text, {F32({4}, {1, 5, 2, 7}), F32({3}, {10, 20, 30})})),
            (std::vector<float>{0, 30, 0, 30}));
  // Ties keep the first element (select(first, later) is true for GE).
  EXPECT_EQ(Floats(MustRun(text, {F32({4}, {4, 4, 4, 4}), F32({3}, {1, 2, 3})})),
            (std::vector<float>{1, 2, 3, 0}));
}

TEST(HloEvalSort, KeysValuesStabilityAndDescending) {
  const std::string text = R"(HloModule m
lt { a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  ROOT l = pred[] compare(a, b), direction=LT }
ENTRY e {
  k = f32[2,4] parameter(0)
  v = s32[2,4] iota(), iota_dimension=1
  ROOT s = (f32[2,4], s32[2,4]) sort(k, v), dimensions={1}, is_stable=true, to_apply=lt
})";
  const Value out = MustRun(text, {F32({2, 4}, {3, 1, 2, 1, 0, -1, 5, -1})});
  EXPECT_EQ(Floats(out.elements[0]), (std::vector<float>{1, 1, 2, 3, -1, -1, 0, 5}));
  EXPECT_EQ(testing::Integers(out.elements[1]), (std::vector<int64_t>{1, 3, 2, 0, 1, 3, 0, 2}));
  const std::string desc = R"(HloModule m
gt { a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT g = pred[] compare(a, b), direction=GT }
ENTRY e {
  x = s32[2,2] parameter(0)
  ROOT s = s32[2,2] sort(x), dimensions={0}, to_apply=gt
})";
  EXPECT_EQ(testing::Integers(MustRun(desc, {Ints(PrimitiveType::kS32, {2, 2}, {1, 9, 5, 2})})),
            (std::vector<int64_t>{5, 9, 1, 2}));
}

TEST(HloEvalSort, TotalOrderPutsNansLast) {
  const std::string text = R"(HloModule m
lt { a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT l = pred[] compare(a, b), direction=LT, type=TOTALORDER }
ENTRY e {
  x = f32[4] parameter(0)
  ROOT s = f32[4] sort(x), dimensions={0}, to_apply=lt
})";
  const std::vector<float> out = Floats(MustRun(text, {F32({4}, {std::nanf(""), 1, -0.0f, 0.0f})}));
  EXPECT_TRUE(std::signbit(out[0]) && out[0] == 0);
  EXPECT_EQ(out[1], 0.0f);
  EXPECT_EQ(out[2], 1.0f);
  EXPECT_TRUE(std::isnan(out[3]));
}

TEST(HloEvalTopKAndMap, Basics) {
  const Value top = MustRun(
      "HloModule m\nENTRY e {\n x = f32[5] parameter(0)\n ROOT t = (f32[2], s32[2]) topk(x), k=2, "
      "largest=true\n}",
      {F32({5}, {3, 7, 1, 7, 2})});
  EXPECT_EQ(Floats(top.elements[0]), (std::vector<float>{7, 7}));
  EXPECT_EQ(testing::Integers(top.elements[1]), (std::vector<int64_t>{1, 3}));
  const std::string map = R"(HloModule m
fma { a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = f32[] parameter(2)
  m = f32[] multiply(a, b)
  ROOT s = f32[] add(m, c) }
ENTRY e {
  x = f32[3] parameter(0)
  y = f32[3] parameter(1)
  z = f32[3] parameter(2)
  ROOT r = f32[3] map(x, y, z), dimensions={0}, to_apply=fma
})";
  EXPECT_EQ(Floats(MustRun(map, {F32({3}, {1, 2, 3}), F32({3}, {4, 5, 6}), F32({3}, {1, 1, 1})})),
            (std::vector<float>{5, 11, 19}));
}

TEST(HloEvalReduce, ReducerWithABroadcastUsesTheFullEvaluator) {
  // A reducer with a non-scalar inner op cannot use the register file; the result is the same.
  const std::string text = R"(HloModule m
odd { a = f32[] parameter(0)
  b = f32[] parameter(1)
  v = f32[1] broadcast(b), dimensions={}
  r = f32[] reshape(v)
  ROOT s = f32[] add(a, r) }
ENTRY e {
  x = f32[4] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(x, z), dimensions={0}, to_apply=odd
})";
  EXPECT_EQ(Floats(MustRun(text, {F32({4}, {1, 2, 3, 4})})), std::vector<float>{10});
}

TEST(HloEvalBatchNorm, TrainingNormalizesPerFeature) {
  const std::string text = R"(HloModule m
ENTRY e {
  x = f32[2,2] parameter(0)
  s = f32[2] parameter(1)
  o = f32[2] parameter(2)
  ROOT b = (f32[2,2], f32[2], f32[2]) batch-norm-training(x, s, o), epsilon=0, feature_index=1
})";
  const Value out =
      MustRun(text, {F32({2, 2}, {1, 10, 3, 30}), F32({2}, {1, 2}), F32({2}, {0, 1})});
  EXPECT_EQ(Floats(out.elements[0]), (std::vector<float>{-1, -1, 1, 3}));
  EXPECT_EQ(Floats(out.elements[1]), (std::vector<float>{2, 20}));
  EXPECT_EQ(Floats(out.elements[2]), (std::vector<float>{1, 100}));
}

}  // namespace
}  // namespace tpuemu::engine::hlo
