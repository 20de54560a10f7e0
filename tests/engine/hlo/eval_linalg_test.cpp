// dot and convolution on the MXU path (TPU numerics per precision), gather and scatter with their
// dimension numbers, against hand-computed results.
#include <gtest/gtest.h>

#include <cmath>

#include "engine/runtime/pool.h"
#include "tests/engine/hlo/hlo_test_util.h"

namespace tpuemu::engine::hlo {
namespace {

using testing::F32;
using testing::Floats;
using testing::Ints;
using testing::MustRun;

void ExpectFloats(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_FLOAT_EQ(got[i], want[i]) << "element " << i;
}

std::string Dot2x2(const std::string& precision) {
  return R"(HloModule m
ENTRY e {
  x = f32[2,2] parameter(0)
  y = f32[2,2] parameter(1)
  ROOT d = f32[2,2] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0})" +
         precision + "\n}\n";
}

// jax-ml/jax#9973: a 2x2 matmul that a TPU computes in one bf16 pass by default.
const Value kX = F32({2, 2}, {0.3744f, 0.1656f, 0.4707f, 0.1663f});
const Value kY = F32({2, 2}, {0.3946f, 0.1186f, 0.1569f, 0.3145f});

TEST(HloEvalDot, OperandPrecisionSelectsTheMxuPasses) {
  ExpectFloats(Floats(MustRun(Dot2x2(", operand_precision={default,default}"), {kX, kY})),
               {0.17405128f, 0.09669876f, 0.21180916f, 0.10805416f});
  ExpectFloats(Floats(MustRun(Dot2x2(", operand_precision={high,high}"), {kX, kY})),
               {0.17371905f, 0.09648438f, 0.21183129f, 0.10812623f});
  ExpectFloats(Floats(MustRun(Dot2x2(", operand_precision={highest,highest}"), {kX, kY})),
               {0.17372088f, 0.09648504f, 0.21183069f, 0.10812636f});
}

TEST(HloEvalDot, NoPrecisionInTheTextUsesTheCallersPrecision) {
  EvalOptions highest;
  highest.precision = Precision::kHighest;
  ExpectFloats(Floats(MustRun(Dot2x2(""), {kX, kY}, highest)),
               {0.17372088f, 0.09648504f, 0.21183069f, 0.10812636f});
  ExpectFloats(Floats(MustRun(Dot2x2(""), {kX, kY})),  // default: one bf16 pass
               {0.17405128f, 0.09669876f, 0.21180916f, 0.10805416f});
}

// A job's cores: the GEMM tiles of a dot and a convolution run on the pool, each output tile on
// one thread, so the numbers do not depend on the threads.
TEST(HloEvalDot, ThePoolRunsTheTilesWithTheSameNumbers) {
  const std::string text = R"(HloModule m
ENTRY e {
  x = f32[4,96,160] parameter(0)
  y = f32[4,160,200] parameter(1)
  d = f32[4,96,200] dot(x, y), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
  i = f32[8,12,12,16] parameter(2)
  k = f32[3,3,16,24] parameter(3)
  c = f32[8,12,12,24] convolution(i, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  ROOT t = (f32[4,96,200], f32[8,12,12,24]) tuple(d, c)
})";
  auto values = [](std::vector<int64_t> dims, float step) {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    std::vector<float> v(static_cast<size_t>(n));
    for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(static_cast<float>(i) * step);
    return F32(std::move(dims), std::move(v));
  };
  const std::vector<Value> args = {values({4, 96, 160}, 0.37f), values({4, 160, 200}, 0.11f),
                                   values({8, 12, 12, 16}, 0.23f), values({3, 3, 16, 24}, 0.5f)};
  Pool pool(3);
  for (Precision precision : {Precision::kDefault, Precision::kHighest}) {
    EvalOptions serial;
    serial.precision = precision;
    EvalOptions pooled = serial;
    pooled.pool = &pool;
    pooled.max_threads = 4;
    const Value one = MustRun(text, args, serial);
    const Value many = MustRun(text, args, pooled);
    std::vector<const Array*> a, b;
    one.CollectArrays(a);
    many.CollectArrays(b);
    ASSERT_EQ(a.size(), 2u);
    ASSERT_EQ(b.size(), 2u);
    EXPECT_EQ(a[0]->f, b[0]->f);
    EXPECT_EQ(a[1]->f, b[1]->f);
  }
}

TEST(HloEvalDot, TransposedOperandsAreReadInPlaceWithTheSameResult) {
  // xᵀ·y (lhs contracting dim 0), x·yᵀ (rhs contracting dim 1) and a batch dot with both read
  // transposed, against an explicit transpose then a plain dot: small integers, so every
  // layout the GEMM reads gives the exact sums.
  const std::string text = R"(HloModule m
ENTRY e {
  x = f32[3,5,4] parameter(0)
  y = f32[3,5,6] parameter(1)
  a = f32[3,4,6] dot(x, y), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={1}, rhs_contracting_dims={1}
  xt = f32[3,4,5] transpose(x), dimensions={0,2,1}
  b = f32[3,4,6] dot(xt, y), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
  yt = f32[3,6,5] transpose(y), dimensions={0,2,1}
  c = f32[3,4,6] dot(xt, yt), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={2}
  ROOT t = (f32[3,4,6], f32[3,4,6], f32[3,4,6]) tuple(a, b, c)
})";
  auto values = [](std::vector<int64_t> dims, int step) {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    std::vector<float> v(static_cast<size_t>(n));
    for (size_t i = 0; i < v.size(); ++i)
      v[i] = static_cast<float>(static_cast<int>(i) * step % 7 - 3);
    return F32(std::move(dims), std::move(v));
  };
  const Value out = MustRun(text, {values({3, 5, 4}, 3), values({3, 5, 6}, 5)});
  ASSERT_EQ(out.elements.size(), 3u);
  const std::vector<float> plain = Floats(out.elements[1]);
  EXPECT_EQ(Floats(out.elements[0]), plain);
  EXPECT_EQ(Floats(out.elements[2]), plain);
  // One element by hand: batch 1, row 2, column 3 = sum over k of x[1,k,2]·y[1,k,3].
  float want = 0;
  for (int k = 0; k < 5; ++k) {
    const int xi = (1 * 5 + k) * 4 + 2, yi = (1 * 5 + k) * 6 + 3;
    want += static_cast<float>(xi * 3 % 7 - 3) * static_cast<float>(yi * 5 % 7 - 3);
  }
  EXPECT_EQ(plain[static_cast<size_t>((1 * 4 + 2) * 6 + 3)], want);
}

TEST(HloEvalDot, BatchAndMultipleContractingDims) {
  // [2(batch), 2, 3] x [2(batch), 3] contracting the 3: per batch a matrix-vector product.
  const std::string text = R"(HloModule m
ENTRY e {
  a = f32[2,2,3] parameter(0)
  b = f32[2,3] parameter(1)
  ROOT d = f32[2,2] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}, operand_precision={highest,highest}
})";
  ExpectFloats(Floats(MustRun(text, {F32({2, 2, 3}, {1, 2, 3, 4, 5, 6, 1, 0, 0, 0, 1, 0}),
                                     F32({2, 3}, {1, 1, 1, 2, 3, 4})})),
               {6, 15, 2, 3});
  const std::string both = R"(HloModule m
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[3,2] parameter(1)
  ROOT d = f32[] dot(a, b), lhs_contracting_dims={0,1}, rhs_contracting_dims={1,0}, operand_precision={highest,highest}
})";
  // sum_ij a[i,j] * b[j,i]
  ExpectFloats(
      Floats(MustRun(both, {F32({2, 3}, {1, 2, 3, 4, 5, 6}), F32({3, 2}, {1, 0, 0, 1, 1, 0})})),
      {1 + 5 + 3});
}

TEST(HloEvalDot, IntegerAndBf16Results) {
  const std::string ints = R"(HloModule m
ENTRY e {
  a = s8[2,2] parameter(0)
  b = s8[2,2] parameter(1)
  ROOT d = s32[2,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";
  EXPECT_EQ(testing::Integers(MustRun(ints, {Ints(PrimitiveType::kS8, {2, 2}, {100, 100, -100, 1}),
                                             Ints(PrimitiveType::kS8, {2, 2}, {100, 1, 100, 1})})),
            (std::vector<int64_t>{20000, 200, -9900, -99}));
  const std::string bf16 = R"(HloModule m
ENTRY e {
  a = bf16[1,2] parameter(0)
  b = bf16[2,1] parameter(1)
  ROOT d = bf16[1,1] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";
  // 1*1 + 2^-8*1 = 1.00390625 in f32, rounded to bf16 on output: 1.
  EXPECT_EQ(Floats(MustRun(bf16, {F32({1, 2}, {1, 0.00390625f}, PrimitiveType::kBF16),
                                  F32({2, 1}, {1, 1}, PrimitiveType::kBF16)})),
            std::vector<float>{1});
}

std::string Conv1d(const std::string& window, const std::string& out,
                   const std::string& extra = "") {
  return R"(HloModule m
ENTRY e {
  x = f32[1,5,1] parameter(0)
  k = f32[2,1,1] parameter(1)
  ROOT c = )" +
         out + " convolution(x, k), window={" + window +
         "}, dim_labels=b0f_0io->b0f, operand_precision={highest,highest}" + extra + "\n}\n";
}

TEST(HloEvalConvolution, StridePaddingAndDilations) {
  const Value x = F32({1, 5, 1}, {1, 2, 3, 4, 5});
  const Value k = F32({2, 1, 1}, {1, -1});
  ExpectFloats(Floats(MustRun(Conv1d("size=2", "f32[1,4,1]"), {x, k})), {-1, -1, -1, -1});
  ExpectFloats(Floats(MustRun(Conv1d("size=2 stride=2", "f32[1,2,1]"), {x, k})), {-1, -1});
  ExpectFloats(Floats(MustRun(Conv1d("size=2 pad=1_1", "f32[1,6,1]"), {x, k})),
               {-1, -1, -1, -1, -1, 5});
  ExpectFloats(Floats(MustRun(Conv1d("size=2 lhs_dilate=2", "f32[1,8,1]"), {x, k})),
               {1, -2, 2, -3, 3, -4, 4, -5});
  ExpectFloats(Floats(MustRun(Conv1d("size=2 rhs_dilate=2", "f32[1,3,1]"), {x, k})), {-2, -2, -2});
  ExpectFloats(Floats(MustRun(Conv1d("size=2 rhs_reversal=1", "f32[1,4,1]"), {x, k})),
               {1, 1, 1, 1});
}

TEST(HloEvalConvolution, FeatureGroupsAreDepthwise) {
  const std::string text = R"(HloModule m
ENTRY e {
  x = f32[1,3,2] parameter(0)
  k = f32[2,1,2] parameter(1)
  ROOT c = f32[1,2,2] convolution(x, k), window={size=2}, dim_labels=b0f_0io->b0f, feature_group_count=2, operand_precision={highest,highest}
})";
  ExpectFloats(
      Floats(MustRun(text, {F32({1, 3, 2}, {1, 10, 2, 20, 3, 30}), F32({2, 1, 2}, {1, 1, 1, 2})})),
      {3, 50, 5, 80});
}

TEST(HloEvalConvolution, BatchGroupsSplitTheBatchOverOutputFeatures) {
  const std::string text = R"(HloModule m
ENTRY e {
  x = f32[2,2,1] parameter(0)
  k = f32[1,1,2] parameter(1)
  ROOT c = f32[1,2,2] convolution(x, k), window={size=1}, dim_labels=b0f_0io->b0f, batch_group_count=2, operand_precision={highest,highest}
})";
  ExpectFloats(Floats(MustRun(text, {F32({2, 2, 1}, {1, 2, 3, 4}), F32({1, 1, 2}, {10, 100})})),
               {10, 300, 20, 400});
}

TEST(HloEvalConvolution, ChannelsFirstLayouts) {
  // NCHW input [1,1,3,3], OIHW kernel [1,1,2,2] of ones: 2x2 window sums.
  const std::string text = R"(HloModule m
ENTRY e {
  x = f32[1,1,3,3] parameter(0)
  k = f32[1,1,2,2] parameter(1)
  ROOT c = f32[1,1,2,2] convolution(x, k), window={size=2x2}, dim_labels=bf01_oi01->bf01, operand_precision={highest,highest}
})";
  ExpectFloats(Floats(MustRun(text, {F32({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}),
                                     F32({1, 1, 2, 2}, {1, 1, 1, 1})})),
               {12, 16, 24, 28});
}

TEST(HloEvalGather, EmbeddingLookupClampsOutOfRangeRows) {
  const std::string text = R"(HloModule m
ENTRY e {
  t = f32[4,2] parameter(0)
  i = s32[3] parameter(1)
  ROOT g = f32[3,2] gather(t, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,2}
})";
  EXPECT_EQ(Floats(MustRun(text, {F32({4, 2}, {0, 1, 10, 11, 20, 21, 30, 31}),
                                  Ints(PrimitiveType::kS32, {3}, {2, 0, 5})})),
            (std::vector<float>{20, 21, 0, 1, 30, 31}));
}

TEST(HloEvalGather, TwoDimensionalWindowsAndBatchingDims) {
  const std::string windows = R"(HloModule m
ENTRY e {
  x = f32[3,3] parameter(0)
  i = s32[2,2] parameter(1)
  ROOT g = f32[2,2,2] gather(x, i), offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={0,1}, index_vector_dim=1, slice_sizes={2,2}
})";
  EXPECT_EQ(Floats(MustRun(windows, {F32({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}),
                                     Ints(PrimitiveType::kS32, {2, 2}, {0, 1, 1, 2})})),
            (std::vector<float>{2, 3, 5, 6, 5, 6, 8, 9}));
  const std::string batched = R"(HloModule m
ENTRY e {
  x = f32[2,3] parameter(0)
  i = s32[2,1] parameter(1)
  ROOT g = f32[2] gather(x, i), offset_dims={}, collapsed_slice_dims={1}, start_index_map={1}, operand_batching_dims={0}, start_indices_batching_dims={0}, index_vector_dim=1, slice_sizes={1,1}
})";
  EXPECT_EQ(Floats(MustRun(batched, {F32({2, 3}, {1, 2, 3, 4, 5, 6}),
                                     Ints(PrimitiveType::kS32, {2, 1}, {2, 0})})),
            (std::vector<float>{3, 4}));
}

constexpr const char* kScatterAdd = R"(HloModule m
add { a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b) }
ENTRY e {
  x = f32[4] parameter(0)
  i = s32[3,1] parameter(1)
  u = f32[3] parameter(2)
  ROOT s = f32[4] scatter(x, i, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
})";

TEST(HloEvalScatter, AddsDuplicatesAndSkipsOutOfBounds) {
  EXPECT_EQ(Floats(MustRun(kScatterAdd,
                           {F32({4}, {0, 0, 0, 0}), Ints(PrimitiveType::kS32, {3, 1}, {1, 3, 1}),
                            F32({3}, {1, 2, 3})})),
            (std::vector<float>{0, 4, 0, 2}));
  EXPECT_EQ(Floats(MustRun(kScatterAdd,
                           {F32({4}, {0, 0, 0, 0}), Ints(PrimitiveType::kS32, {3, 1}, {7, -1, 2}),
                            F32({3}, {1, 2, 3})})),
            (std::vector<float>{0, 0, 3, 0}));
}

TEST(HloEvalScatter, WindowsAreSkippedWholeWhenTheyWouldLeave) {
  const std::string text = R"(HloModule m
assign { a = f32[] parameter(0)
  ROOT b = f32[] parameter(1) }
ENTRY e {
  x = f32[3,3] parameter(0)
  i = s32[2,2] parameter(1)
  u = f32[2,2,2] parameter(2)
  ROOT s = f32[3,3] scatter(x, i, u), update_window_dims={1,2}, inserted_window_dims={}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=1, to_apply=assign
})";
  EXPECT_EQ(Floats(MustRun(text, {F32({3, 3}, {0, 0, 0, 0, 0, 0, 0, 0, 0}),
                                  Ints(PrimitiveType::kS32, {2, 2}, {1, 1, 2, 2}),
                                  F32({2, 2, 2}, {1, 2, 3, 4, 9, 9, 9, 9})})),
            (std::vector<float>{0, 0, 0, 0, 1, 2, 0, 3, 4}));
}

TEST(HloEvalScatter, VariadicOperandsShareOneComputation) {
  const std::string text = R"(HloModule m
pair { a0 = f32[] parameter(0)
  a1 = s32[] parameter(1)
  b0 = f32[] parameter(2)
  b1 = s32[] parameter(3)
  s0 = f32[] add(a0, b0)
  s1 = s32[] maximum(a1, b1)
  ROOT t = (f32[], s32[]) tuple(s0, s1) }
ENTRY e {
  x = f32[2] parameter(0)
  y = s32[2] parameter(1)
  i = s32[2] parameter(2)
  u = f32[2] parameter(3)
  v = s32[2] parameter(4)
  ROOT s = (f32[2], s32[2]) scatter(x, y, i, u, v), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=pair
})";
  const Value out = MustRun(text, {F32({2}, {1, 1}), Ints(PrimitiveType::kS32, {2}, {5, 5}),
                                   Ints(PrimitiveType::kS32, {2}, {0, 0}), F32({2}, {2, 3}),
                                   Ints(PrimitiveType::kS32, {2}, {7, 3})});
  ASSERT_TRUE(out.is_tuple);
  EXPECT_EQ(Floats(out.elements[0]), (std::vector<float>{6, 1}));
  EXPECT_EQ(testing::Integers(out.elements[1]), (std::vector<int64_t>{7, 5}));
}

}  // namespace
}  // namespace tpuemu::engine::hlo
