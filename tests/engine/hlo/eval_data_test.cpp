// Data movement against hand-computed results: broadcast, reshape, bitcast across layouts,
// transpose, reverse, strided slice, dynamic-slice / dynamic-update-slice with clamped starts,
// concatenate, pad (interior and negative), iota.
#include <gtest/gtest.h>

#include "engine/runtime/pool.h"
#include "tests/engine/hlo/hlo_test_util.h"

namespace tpuemu::engine::hlo {
namespace {

using testing::F32;
using testing::Floats;
using testing::Ints;
using testing::MustRun;

std::string Unary(const std::string& in, const std::string& out, const std::string& rhs) {
  return "HloModule m\nENTRY e {\n  x = " + in + " parameter(0)\n  ROOT r = " + out + " " + rhs +
         "\n}\n";
}

const Value kM23 = F32({2, 3}, {1, 2, 3, 4, 5, 6});

// Large broadcasts and transposes copy in chunks on the job's threads; a chunk may start in the
// middle of a row (65536 is no multiple of 517), and every element lands where a serial copy
// puts it.
TEST(HloEvalData, ChunkedBroadcastAndTransposeOnThePool) {
  const std::string text = R"(HloModule m
ENTRY e {
  x = f32[300,517] parameter(0)
  t = f32[517,300] transpose(x), dimensions={1,0}
  r = f32[517] parameter(1)
  b = f32[3,300,517] broadcast(r), dimensions={2}
  ROOT out = (f32[517,300], f32[3,300,517]) tuple(t, b)
})";
  std::vector<float> xv(300 * 517), rv(517);
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = static_cast<float>(i);
  for (size_t i = 0; i < rv.size(); ++i) rv[i] = -static_cast<float>(i);
  const std::vector<Value> args = {F32({300, 517}, xv), F32({517}, rv)};
  Pool pool(3);
  EvalOptions pooled;
  pooled.pool = &pool;
  pooled.max_threads = 4;
  const Value v = MustRun(text, args, pooled);
  std::vector<const Array*> leaves;
  v.CollectArrays(leaves);
  ASSERT_EQ(leaves.size(), 2u);
  for (int64_t i = 0; i < 517; ++i) {
    for (int64_t j = 0; j < 300; ++j) {
      ASSERT_EQ(leaves[0]->f[static_cast<size_t>(i * 300 + j)], static_cast<float>(j * 517 + i));
    }
  }
  for (int64_t k = 0; k < 3 * 300 * 517; ++k) {
    ASSERT_EQ(leaves[1]->f[static_cast<size_t>(k)], -static_cast<float>(k % 517)) << k;
  }
}

TEST(HloEvalData, Broadcast) {
  EXPECT_EQ(Floats(MustRun(Unary("f32[3]", "f32[2,3]", "broadcast(x), dimensions={1}"),
                           {F32({3}, {1, 2, 3})})),
            (std::vector<float>{1, 2, 3, 1, 2, 3}));
  EXPECT_EQ(Floats(MustRun(Unary("f32[2]", "f32[2,3]", "broadcast(x), dimensions={0}"),
                           {F32({2}, {7, 8})})),
            (std::vector<float>{7, 7, 7, 8, 8, 8}));
}

TEST(HloEvalData, TransposeReverseReshape) {
  EXPECT_EQ(
      Floats(MustRun(Unary("f32[2,3]", "f32[3,2]", "transpose(x), dimensions={1,0}"), {kM23})),
      (std::vector<float>{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(Floats(MustRun(Unary("f32[2,3]", "f32[2,3]", "reverse(x), dimensions={1}"), {kM23})),
            (std::vector<float>{3, 2, 1, 6, 5, 4}));
  EXPECT_EQ(Floats(MustRun(Unary("f32[2,3]", "f32[2,3]", "reverse(x), dimensions={0,1}"), {kM23})),
            (std::vector<float>{6, 5, 4, 3, 2, 1}));
  const Value r = MustRun(Unary("f32[2,3]", "f32[3,2]", "reshape(x)"), {kM23});
  EXPECT_EQ(Floats(r), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(r.array->dims, (std::vector<int64_t>{3, 2}));
}

TEST(HloEvalData, BitcastReinterpretsThePhysicalLayout) {
  // f32[2,3]{0,1} is column-major: physically 1 4 2 5 3 6. Read as f32[3,2]{1,0} (row-major)
  // that buffer is the transpose.
  EXPECT_EQ(Floats(MustRun(Unary("f32[2,3]{0,1}", "f32[3,2]{1,0}", "bitcast(x)"), {kM23})),
            (std::vector<float>{1, 4, 2, 5, 3, 6}));
  // Same layout order: a plain reshape.
  EXPECT_EQ(Floats(MustRun(Unary("f32[2,3]{1,0}", "f32[6]{0}", "bitcast(x)"), {kM23})),
            (std::vector<float>{1, 2, 3, 4, 5, 6}));
}

TEST(HloEvalData, StridedSlice) {
  const Value v = F32({10}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  EXPECT_EQ(Floats(MustRun(Unary("f32[10]", "f32[3]", "slice(x), slice={[1:9:3]}"), {v})),
            (std::vector<float>{1, 4, 7}));
  EXPECT_EQ(
      Floats(MustRun(Unary("f32[2,3]", "f32[2,1]", "slice(x), slice={[0:2], [2:3]}"), {kM23})),
      (std::vector<float>{3, 6}));
}

TEST(HloEvalData, DynamicSliceClampsItsStart) {
  const std::string text = R"(HloModule m
ENTRY e {
  x = f32[2,3] parameter(0)
  i = s32[] parameter(1)
  j = s32[] parameter(2)
  ROOT r = f32[2,2] dynamic-slice(x, i, j), dynamic_slice_sizes={2,2}
})";
  auto run = [&](int64_t i, int64_t j) {
    return Floats(MustRun(
        text, {kM23, Ints(PrimitiveType::kS32, {}, {i}), Ints(PrimitiveType::kS32, {}, {j})}));
  };
  EXPECT_EQ(run(0, 1), (std::vector<float>{2, 3, 5, 6}));
  EXPECT_EQ(run(5, 9), (std::vector<float>{2, 3, 5, 6}));    // clamped to (0, 1)
  EXPECT_EQ(run(-3, -1), (std::vector<float>{1, 2, 4, 5}));  // clamped to (0, 0)
}

TEST(HloEvalData, DynamicUpdateSliceClampsItsStart) {
  const std::string text = R"(HloModule m
ENTRY e {
  x = f32[2,3] parameter(0)
  u = f32[1,2] parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  ROOT r = f32[2,3] dynamic-update-slice(x, u, i, j)
})";
  auto run = [&](int64_t i, int64_t j) {
    return Floats(MustRun(text, {kM23, F32({1, 2}, {-1, -2}), Ints(PrimitiveType::kS32, {}, {i}),
                                 Ints(PrimitiveType::kS32, {}, {j})}));
  };
  EXPECT_EQ(run(1, 0), (std::vector<float>{1, 2, 3, -1, -2, 6}));
  EXPECT_EQ(run(7, 7), (std::vector<float>{1, 2, 3, 4, -1, -2}));  // clamped to (1, 1)
}

TEST(HloEvalData, ConcatenateAndPad) {
  const std::string concat = R"(HloModule m
ENTRY e {
  a = f32[2,1] parameter(0)
  b = f32[2,2] parameter(1)
  ROOT r = f32[2,3] concatenate(a, b), dimensions={1}
})";
  EXPECT_EQ(Floats(MustRun(concat, {F32({2, 1}, {1, 4}), F32({2, 2}, {2, 3, 5, 6})})),
            (std::vector<float>{1, 2, 3, 4, 5, 6}));
  const std::string pad = R"(HloModule m
ENTRY e {
  x = f32[3] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[8] pad(x, z), padding=1_2_1
})";
  EXPECT_EQ(Floats(MustRun(pad, {F32({3}, {1, 2, 3})})),
            (std::vector<float>{0, 1, 0, 2, 0, 3, 0, 0}));
  const std::string negative = R"(HloModule m
ENTRY e {
  x = f32[2,3] parameter(0)
  z = f32[] constant(-1)
  ROOT r = f32[3,2] pad(x, z), padding=1_0x-1_0
})";
  EXPECT_EQ(Floats(MustRun(negative, {kM23})), (std::vector<float>{-1, -1, 2, 3, 5, 6}));
}

TEST(HloEvalData, IotaTupleAndDimensionSize) {
  EXPECT_EQ(testing::Integers(MustRun(
                "HloModule m\nENTRY e {\n ROOT i = s32[2,3] iota(), iota_dimension=1\n}", {})),
            (std::vector<int64_t>{0, 1, 2, 0, 1, 2}));
  EXPECT_EQ(
      Floats(MustRun("HloModule m\nENTRY e {\n ROOT i = bf16[4] iota(), iota_dimension=0\n}", {})),
      (std::vector<float>{0, 1, 2, 3}));
  const Value t = MustRun(R"(HloModule m
ENTRY e {
  x = f32[2,3] parameter(0)
  n = s32[] get-dimension-size(x), dimensions={1}
  c = f32[2,3] copy(x)
  t = (f32[2,3], s32[]) tuple(c, n)
  ROOT g = s32[] get-tuple-element(t), index=1
})",
                          {kM23});
  EXPECT_EQ(testing::Integers(t), std::vector<int64_t>{3});
}

TEST(HloEvalData, ConvertChainsAndBf16Storage) {
  const std::string text = R"(HloModule m
ENTRY e {
  x = f32[3] parameter(0)
  b = bf16[3] convert(x)
  i = s32[3] convert(b)
  ROOT f = f32[3] convert(i)
})";
  EXPECT_EQ(Floats(MustRun(text, {F32({3}, {2.7f, -300.6f, 1e10f})})),
            (std::vector<float>{2, -300, 2147483647.0f}));
}

}  // namespace
}  // namespace tpuemu::engine::hlo
