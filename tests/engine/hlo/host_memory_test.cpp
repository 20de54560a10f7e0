// PeakHostBytes (engine/hlo/host_memory.h): the evaluator's element sizes, liveness (a value is
// freed after its last use, so a chain peaks at two links), callee frames, dot scratch and the
// devices, each checked against a figure worked out by hand.
#include <gtest/gtest.h>

#include "engine/hlo/host_memory.h"
#include "tests/engine/hlo/hlo_test_util.h"

namespace tpuemu::engine::hlo {
namespace {

using testing::MustParse;

TEST(HloHostMemory, ElementsTakeTheEvaluatorsSizes) {
  EXPECT_EQ(HostValueBytes(Shape::Array(PrimitiveType::kF32, {10})), 40);
  EXPECT_EQ(HostValueBytes(Shape::Array(PrimitiveType::kBF16, {10})), 40);  // kept as f32
  EXPECT_EQ(HostValueBytes(Shape::Array(PrimitiveType::kS32, {10})), 80);   // kept as int64
  EXPECT_EQ(HostValueBytes(Shape::Array(PrimitiveType::kPred, {10})), 80);
}

// x -> a -> b -> c on f32[1000] (4,000 bytes each), then ROOT d = `root`.
Module Chain(const std::string& root) {
  return MustParse(R"(HloModule m
ENTRY e {
  x = f32[1000] parameter(0)
  a = f32[1000] negate(x)
  b = f32[1000] exponential(a)
  c = f32[1000] negate(b)
  ROOT d = f32[1000] )" +
                   root + "\n}");
}

// The parameter lives throughout, every link frees the one before it, so at most two links are
// live at once; the result is kept once more for the previous step.
TEST(HloHostMemory, AChainPeaksAtTwoLinks) {
  EXPECT_EQ(PeakHostBytes(Chain("exponential(c)")), 4000 + 2 * 4000 + 4000);
}

TEST(HloHostMemory, ValuesStayLiveUntilTheirLastUse) {
  // a lives until d: a, b, c at once, then a, c, d.
  EXPECT_EQ(PeakHostBytes(Chain("add(c, a)")), 4000 + 3 * 4000 + 4000);
}

TEST(HloHostMemory, EveryDeviceHoldsItsOwnValues) {
  const Module one = MustParse(R"(HloModule m
ENTRY e {
  x = f32[1000] parameter(0)
  ROOT a = f32[1000] negate(x)
})");
  const Module four = MustParse(R"(HloModule m, replica_count=4
ENTRY e {
  x = f32[1000] parameter(0)
  ROOT a = f32[1000] negate(x)
})");
  EXPECT_EQ(PeakHostBytes(one), 3 * 4000);
  EXPECT_EQ(PeakHostBytes(four), 4 * PeakHostBytes(one));
}

// A fusion's computation runs as a frame of its own: its temporaries count while it runs.
TEST(HloHostMemory, ACalleeAddsItsOwnPeak) {
  const Module m = MustParse(R"(HloModule m
fused {
  p = f32[1000] parameter(0)
  t = f32[1000] negate(p)
  ROOT u = f32[1000] exponential(t)
}
ENTRY e {
  x = f32[1000] parameter(0)
  ROOT f = f32[1000] fusion(x), kind=kLoop, calls=fused
})");
  // Entry: x; while f runs, its frame holds t and u (8,000) besides f's own result; kept result.
  EXPECT_EQ(PeakHostBytes(m), 4000 + (8000 + 4000) + 4000);
}

// A dot adds its GEMM's operand planes at its precision (1, 2 or 3 per operand element): it reads
// row-major and transposed operands in place and writes a float result in place.
TEST(HloHostMemory, ADotAddsItsPlanesAtItsPrecision) {
  const Module m = MustParse(R"(HloModule m
ENTRY e {
  a = f32[100,200] parameter(0)
  b = f32[300,200] parameter(1)
  ROOT c = f32[100,300] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={1}
})");
  const int64_t l = 100 * 200, r = 200 * 300, out = 100 * 300;
  const int64_t params = 4 * (l + r), result = 4 * out;
  EXPECT_EQ(PeakHostBytes(m), params + (12 * (l + r) + result) + result) << "HIGHEST bounds all";
  EXPECT_EQ(PeakHostBytes(m, Precision::kHigh), params + (8 * (l + r) + result) + result);
  EXPECT_EQ(PeakHostBytes(m, Precision::kDefault), params + (4 * (l + r) + result) + result);
}

// An operand whose batch dims do not lead is copied, and an instruction's own precision wins.
TEST(HloHostMemory, ADotCopiesAnOperandItCannotReadInPlace) {
  const Module m = MustParse(R"(HloModule m
ENTRY e {
  a = f32[8,100,200] parameter(0)
  b = f32[200,8,300] parameter(1)
  ROOT c = f32[8,100,300] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={1}, lhs_contracting_dims={2}, rhs_contracting_dims={0}, operand_precision={highest,highest}
})");
  const int64_t l = 8 * 100 * 200, r = 200 * 8 * 300, out = 8 * 100 * 300;
  const int64_t params = 4 * (l + r), result = 4 * out;
  EXPECT_EQ(PeakHostBytes(m, Precision::kDefault),
            params + (4 * r + 12 * (l + r) + result) + result);
}

}  // namespace
}  // namespace tpuemu::engine::hlo
