// Elementwise semantics against hand-computed values: float rounding per type, integer
// wrap-around and XLA's division/shift rules, comparisons (total order), converts, and
// reduce-precision.
#include "engine/hlo/elementwise.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <vector>

#include "engine/kernels/vector_math.h"
#include "tests/engine/hlo/hlo_test_util.h"

namespace tpuemu::engine::hlo {
namespace {

Scalar F(float v, PrimitiveType t = PrimitiveType::kF32) { return Scalar{t, RoundToType(t, v), 0}; }
Scalar I(int64_t v, PrimitiveType t) { return Scalar{t, 0, CanonicalInt(t, v)}; }

int64_t Bin(Opcode op, PrimitiveType t, int64_t a, int64_t b) {
  return ApplyBinary(ElementwiseOp{op, t}, I(a, t), I(b, t)).i;
}

TEST(HloElementwise, Bf16AndF16RoundToNearestEvenKeepingSubnormals) {
  EXPECT_EQ(RoundToType(PrimitiveType::kBF16, 1.00390625f), 1.0f);       // tie -> even
  EXPECT_EQ(RoundToType(PrimitiveType::kBF16, 1.01171875f), 1.015625f);  // tie -> even (up)
  EXPECT_EQ(RoundToType(PrimitiveType::kBF16, 3.0e38f), 3.00405527e38f);
  EXPECT_TRUE(std::isinf(RoundToType(PrimitiveType::kBF16, 3.4e38f)));
  EXPECT_EQ(RoundToType(PrimitiveType::kBF16, 1e-39f), 1.01019046e-39f);  // subnormal kept
  EXPECT_EQ(RoundToType(PrimitiveType::kF16, 65519.0f), 65504.0f);
  EXPECT_TRUE(std::isinf(RoundToType(PrimitiveType::kF16, 65520.0f)));
  EXPECT_EQ(RoundToType(PrimitiveType::kF16, 0.1f), 0.0999755859375f);
  EXPECT_EQ(RoundToType(PrimitiveType::kF16, 6e-8f), 5.96046448e-08f);  // smallest subnormal
  EXPECT_EQ(RoundToType(PrimitiveType::kF16, 2e-8f), 0.0f);
  EXPECT_EQ(F16BitsToF32(0x3c00), 1.0f);
  EXPECT_EQ(F32ToF16Bits(-2.0f), 0xc000);
}

// The whole-array rounding (a bf16 dot's result, converts) gives RoundToType's bits for every
// kind of value, in place and into another buffer.
TEST(HloElementwise, ArrayRoundingEqualsElementRoundingBitForBit) {
  std::vector<float> values = {0.0f,
                               -0.0f,
                               1.00390625f,
                               1.01171875f,
                               -1.00390625f,
                               3.0e38f,
                               3.4e38f,
                               -3.4e38f,
                               1e-39f,
                               -1e-39f,
                               1e-45f,
                               65519.0f,
                               0.1f,
                               std::numeric_limits<float>::infinity(),
                               -std::numeric_limits<float>::infinity(),
                               std::numeric_limits<float>::max(),
                               std::numeric_limits<float>::min(),
                               std::bit_cast<float>(0x7fa12345u),
                               std::bit_cast<float>(0xffc00001u)};
  uint32_t bits = 0x12345678u;
  for (int i = 0; i < 1000; ++i) {  // every exponent, with the low halves that decide rounding
    bits = bits * 1664525u + 1013904223u;
    values.push_back(std::bit_cast<float>(bits));
  }
  for (PrimitiveType type : {PrimitiveType::kBF16, PrimitiveType::kF16, PrimitiveType::kF32}) {
    std::vector<float> out(values.size()), in_place = values;
    RoundToType(type, values.data(), out.data(), static_cast<int64_t>(values.size()));
    RoundToType(type, in_place.data(), in_place.data(), static_cast<int64_t>(in_place.size()));
    for (size_t k = 0; k < values.size(); ++k) {
      const uint32_t want = std::bit_cast<uint32_t>(RoundToType(type, values[k]));
      EXPECT_EQ(std::bit_cast<uint32_t>(out[k]), want) << PrimitiveTypeName(type) << " " << k;
      EXPECT_EQ(std::bit_cast<uint32_t>(in_place[k]), want) << PrimitiveTypeName(type) << " " << k;
    }
  }
}

TEST(HloElementwise, Bf16ArithmeticRoundsAfterEveryOp) {
  const PrimitiveType bf16 = PrimitiveType::kBF16;
  // 1 + 2^-8 is not a bf16: the sum rounds back to 1.
  EXPECT_EQ(ApplyBinary(ElementwiseOp{Opcode::kAdd, bf16}, F(1, bf16), F(0.00390625f, bf16)).f,
            1.0f);
  EXPECT_EQ(ApplyBinary(ElementwiseOp{Opcode::kMultiply, bf16}, F(3, bf16), F(1.0078125f, bf16)).f,
            3.03125f);
}

// One elementwise family: exp, tanh and logistic are the native kernels' functions
// (engine/kernels/vector_math.h), bit for bit, element by element and over whole arrays.
TEST(HloElementwise, ExpTanhAndLogisticAreTheEnginesOwn) {
  std::vector<float> xs = {0.0f,
                           -0.0f,
                           1e-30f,
                           -1e-7f,
                           0.3f,
                           -0.6249f,
                           0.625f,
                           1.5f,
                           -7.25f,
                           20.0f,
                           88.7f,
                           88.75f,
                           -87.5f,
                           -103.9f,
                           -110.0f,
                           std::numeric_limits<float>::infinity(),
                           -std::numeric_limits<float>::infinity(),
                           std::numeric_limits<float>::quiet_NaN()};
  for (int k = -4000; k <= 4000; ++k) xs.push_back(static_cast<float>(k) * 0.0137f);
  const auto n = static_cast<int64_t>(xs.size());
  std::vector<float> exp_native(xs.size()), tanh_native(xs.size()), neg(xs.size());
  ExpArray(xs.data(), exp_native.data(), n);
  TanhArray(xs.data(), tanh_native.data(), n);
  for (size_t i = 0; i < xs.size(); ++i) neg[i] = -xs[i];
  std::vector<float> exp_neg(xs.size());
  ExpArray(neg.data(), exp_neg.data(), n);

  Array x = Array::Zeros(PrimitiveType::kF32, {n});
  x.f.assign(xs.begin(), xs.end());
  const Array exp_hlo = ApplyUnary(ElementwiseOp{Opcode::kExp}, x);
  const Array tanh_hlo = ApplyUnary(ElementwiseOp{Opcode::kTanh}, x);
  const Array logistic_hlo = ApplyUnary(ElementwiseOp{Opcode::kLogistic}, x);
  auto bits = [](float v) { return std::bit_cast<uint32_t>(v); };
  for (size_t i = 0; i < xs.size(); ++i) {
    SCOPED_TRACE(xs[i]);
    EXPECT_EQ(bits(exp_hlo.f[i]), bits(exp_native[i]));
    EXPECT_EQ(bits(tanh_hlo.f[i]), bits(tanh_native[i]));
    EXPECT_EQ(bits(ApplyUnary(ElementwiseOp{Opcode::kExp}, F(xs[i])).f), bits(exp_native[i]));
    EXPECT_EQ(bits(ApplyUnary(ElementwiseOp{Opcode::kTanh}, F(xs[i])).f), bits(tanh_native[i]));
    EXPECT_EQ(bits(logistic_hlo.f[i]), bits(1.0f / (1.0f + exp_neg[i])));
  }
  // bf16 rounds the engine's f32 result, as after every op.
  Array b = Array::Zeros(PrimitiveType::kBF16, {2});
  b.f = {1.0f, -2.0f};
  const Array exp_bf16 = ApplyUnary(ElementwiseOp{Opcode::kExp, PrimitiveType::kBF16}, b);
  EXPECT_EQ(exp_bf16.f[0], RoundToType(PrimitiveType::kBF16, ExpOne(1.0f)));
  EXPECT_EQ(exp_bf16.f[1], RoundToType(PrimitiveType::kBF16, ExpOne(-2.0f)));
}

TEST(HloElementwise, IntegerWrapDivisionAndRemainderRules) {
  const PrimitiveType s8 = PrimitiveType::kS8, u8 = PrimitiveType::kU8, s32 = PrimitiveType::kS32;
  EXPECT_EQ(Bin(Opcode::kAdd, s8, 127, 1), -128);
  EXPECT_EQ(Bin(Opcode::kMultiply, u8, 16, 17), 16);  // 272 mod 256
  EXPECT_EQ(Bin(Opcode::kSubtract, u8, 0, 1), 255);
  EXPECT_EQ(Bin(Opcode::kDivide, s32, 7, -2), -3);     // truncates toward zero
  EXPECT_EQ(Bin(Opcode::kRemainder, s32, -7, 2), -1);  // sign of the dividend
  EXPECT_EQ(Bin(Opcode::kDivide, s32, 5, 0), -1);
  EXPECT_EQ(Bin(Opcode::kRemainder, s32, 5, 0), 5);
  EXPECT_EQ(Bin(Opcode::kDivide, s8, -128, -1), -128);
  EXPECT_EQ(Bin(Opcode::kRemainder, s8, -128, -1), 0);
  EXPECT_EQ(Bin(Opcode::kDivide, u8, 5, 0), 255);
  EXPECT_EQ(Bin(Opcode::kPower, s32, 3, 4), 81);
  EXPECT_EQ(Bin(Opcode::kPower, s32, 2, -1), 0);
  EXPECT_EQ(Bin(Opcode::kMaximum, u8, 200, 100), 200);
  EXPECT_EQ(Bin(Opcode::kMinimum, s8, -100, 100), -100);
}

TEST(HloElementwise, ShiftsByTheWidthOrMore) {
  const PrimitiveType s8 = PrimitiveType::kS8, u32 = PrimitiveType::kU32;
  EXPECT_EQ(Bin(Opcode::kShiftLeft, s8, 1, 7), -128);
  EXPECT_EQ(Bin(Opcode::kShiftLeft, s8, 1, 8), 0);
  EXPECT_EQ(Bin(Opcode::kShiftRightArithmetic, s8, -16, 2), -4);
  EXPECT_EQ(Bin(Opcode::kShiftRightArithmetic, s8, -16, 9), -1);
  EXPECT_EQ(Bin(Opcode::kShiftRightLogical, s8, -16, 2), 60);  // 0xf0 >> 2
  EXPECT_EQ(Bin(Opcode::kShiftRightLogical, u32, 0x80000000LL, 31), 1);
  EXPECT_EQ(Bin(Opcode::kShiftRightLogical, u32, 0x80000000LL, 32), 0);
}

TEST(HloElementwise, UnaryIntegerOps) {
  auto un = [](Opcode op, PrimitiveType t, int64_t x) {
    return ApplyUnary(ElementwiseOp{op, t}, I(x, t)).i;
  };
  EXPECT_EQ(un(Opcode::kClz, PrimitiveType::kU32, 1), 31);
  EXPECT_EQ(un(Opcode::kClz, PrimitiveType::kS8, 0), 8);
  EXPECT_EQ(un(Opcode::kPopulationCount, PrimitiveType::kS8, -1), 8);
  EXPECT_EQ(un(Opcode::kNot, PrimitiveType::kU8, 0x0f), 0xf0);
  EXPECT_EQ(un(Opcode::kNot, PrimitiveType::kPred, 1), 0);
  EXPECT_EQ(un(Opcode::kAbs, PrimitiveType::kS8, -128), -128);
  EXPECT_EQ(un(Opcode::kNegate, PrimitiveType::kS32, INT32_MIN), INT32_MIN);
  EXPECT_EQ(un(Opcode::kSign, PrimitiveType::kS32, -9), -1);
}

TEST(HloElementwise, FloatOps) {
  auto un = [](Opcode op, float x) {
    return ApplyUnary(ElementwiseOp{op, PrimitiveType::kF32}, F(x)).f;
  };
  auto bin = [](Opcode op, float a, float b) {
    return ApplyBinary(ElementwiseOp{op, PrimitiveType::kF32}, F(a), F(b)).f;
  };
  EXPECT_EQ(un(Opcode::kRoundNearestEven, 2.5f), 2.0f);
  EXPECT_EQ(un(Opcode::kRoundNearestAfz, 2.5f), 3.0f);
  EXPECT_EQ(un(Opcode::kRoundNearestAfz, -2.5f), -3.0f);
  EXPECT_EQ(un(Opcode::kSign, -0.0f), -0.0f);
  EXPECT_TRUE(std::signbit(un(Opcode::kSign, -0.0f)));
  EXPECT_FLOAT_EQ(un(Opcode::kLogistic, 0.0f), 0.5f);
  EXPECT_FLOAT_EQ(un(Opcode::kRsqrt, 4.0f), 0.5f);
  EXPECT_FLOAT_EQ(un(Opcode::kExpm1, 0.0f), 0.0f);
  EXPECT_FLOAT_EQ(un(Opcode::kLog1p, 0.0f), 0.0f);
  EXPECT_NEAR(un(Opcode::kErf, 1.0f), 0.8427008f, 1e-6);
  EXPECT_NEAR(un(Opcode::kTanh, 0.5f), 0.46211716f, 1e-6);
  EXPECT_TRUE(std::isnan(bin(Opcode::kMaximum, std::nanf(""), 1.0f)));
  EXPECT_TRUE(std::isnan(bin(Opcode::kMinimum, 1.0f, std::nanf(""))));
  EXPECT_EQ(bin(Opcode::kRemainder, 7.5f, 2.0f), 1.5f);
  EXPECT_EQ(bin(Opcode::kRemainder, -7.5f, 2.0f), -1.5f);
  EXPECT_FLOAT_EQ(bin(Opcode::kAtan2, 1.0f, 1.0f), 0.78539816f);
  EXPECT_EQ(bin(Opcode::kPower, 2.0f, 10.0f), 1024.0f);
  EXPECT_EQ(ApplyUnary(ElementwiseOp{Opcode::kIsFinite, PrimitiveType::kPred},
                       F(std::numeric_limits<float>::infinity()))
                .i,
            0);
}

TEST(HloElementwise, CompareDirectionsAndTotalOrder) {
  const float nan = std::nanf("");
  EXPECT_FALSE(Compare(Direction::kLt, CompareType::kFloat, F(nan), F(1)));
  EXPECT_TRUE(Compare(Direction::kNe, CompareType::kFloat, F(nan), F(nan)));
  EXPECT_TRUE(Compare(Direction::kLt, CompareType::kTotalOrder, F(1), F(nan)));
  EXPECT_TRUE(Compare(Direction::kLt, CompareType::kTotalOrder, F(-nan), F(-1e30f)));
  EXPECT_TRUE(Compare(Direction::kLt, CompareType::kTotalOrder, F(-0.0f), F(0.0f)));
  EXPECT_FALSE(Compare(Direction::kLt, CompareType::kFloat, F(-0.0f), F(0.0f)));
  EXPECT_TRUE(Compare(Direction::kGt, CompareType::kDefault, I(-1, PrimitiveType::kU32),
                      I(1, PrimitiveType::kU32)));  // 0xffffffff > 1 unsigned
  EXPECT_TRUE(Compare(Direction::kLt, CompareType::kDefault, I(-1, PrimitiveType::kS32),
                      I(1, PrimitiveType::kS32)));
  EXPECT_TRUE(Compare(Direction::kGe, CompareType::kDefault, I(-1, PrimitiveType::kU64),
                      I(INT64_MAX, PrimitiveType::kU64)));
}

TEST(HloElementwise, WholeArrayCompareSelectAndConvertAgreeWithOneElementAtATime) {
  // The array loops (compare, a masked select, f32 -> bf16/f16 converts) must give what the
  // Scalar functions give for every pair, NaN, infinities and signed zeros included.
  const float nan = std::nanf("");
  const std::vector<float> xs{nan,      1,         -1,       0.0f,   -0.0f,
                              INFINITY, -INFINITY, 3.14159f, 1e-40f, 65504.5f};
  std::vector<float> as, bs;
  for (float a : xs) {
    for (float b : xs) {
      as.push_back(a);
      bs.push_back(b);
    }
  }
  const int64_t n = static_cast<int64_t>(as.size());
  Array a = Array::Zeros(PrimitiveType::kF32, {n}), b = a;
  a.f.assign(as.begin(), as.end());
  b.f.assign(bs.begin(), bs.end());
  for (CompareType type : {CompareType::kDefault, CompareType::kFloat, CompareType::kTotalOrder}) {
    for (Direction d : {Direction::kEq, Direction::kNe, Direction::kLt, Direction::kLe,
                        Direction::kGt, Direction::kGe}) {
      ElementwiseOp op{Opcode::kCompare, PrimitiveType::kPred};
      op.direction = d;
      op.compare_type = type;
      const Array got = ApplyBinary(op, a, b);
      ASSERT_EQ(got.type, PrimitiveType::kPred);
      for (int64_t k = 0; k < n; ++k) {
        const auto i = static_cast<size_t>(k);
        EXPECT_EQ(got.i[i], Compare(d, type, F(as[i]), F(bs[i])) ? 1 : 0)
            << as[i] << " vs " << bs[i] << " direction " << static_cast<int>(d);
      }
    }
  }
  Array mask = Array::Zeros(PrimitiveType::kPred, {n});
  for (int64_t k = 0; k < n; ++k) mask.i[static_cast<size_t>(k)] = (k * 7919) % 3 == 0;
  const Array picked = Select(mask, a, b);
  for (int64_t k = 0; k < n; ++k) {
    const auto i = static_cast<size_t>(k);
    const float want = mask.i[i] != 0 ? as[i] : bs[i];
    EXPECT_EQ(std::bit_cast<uint32_t>(picked.f[i]), std::bit_cast<uint32_t>(want)) << k;
  }
  for (PrimitiveType to : {PrimitiveType::kBF16, PrimitiveType::kF16}) {
    const Array got = ApplyUnary(ElementwiseOp{Opcode::kConvert, to}, a);
    for (int64_t k = 0; k < n; ++k) {
      const auto i = static_cast<size_t>(k);
      const Scalar want = ApplyUnary(ElementwiseOp{Opcode::kConvert, to}, F(as[i]));
      EXPECT_EQ(std::bit_cast<uint32_t>(got.f[i]), std::bit_cast<uint32_t>(want.f)) << as[i];
    }
  }
}

TEST(HloElementwise, ConvertSaturatesAndRounds) {
  auto cv = [](Scalar x, PrimitiveType to) {
    return ApplyUnary(ElementwiseOp{Opcode::kConvert, to}, x);
  };
  EXPECT_EQ(cv(F(1e10f), PrimitiveType::kS32).i, INT32_MAX);
  EXPECT_EQ(cv(F(-1e10f), PrimitiveType::kS32).i, INT32_MIN);
  EXPECT_EQ(cv(F(std::nanf("")), PrimitiveType::kS32).i, 0);
  EXPECT_EQ(cv(F(-3.9f), PrimitiveType::kS32).i, -3);
  EXPECT_EQ(cv(F(-1.0f), PrimitiveType::kU8).i, 0);
  EXPECT_EQ(cv(F(300.0f), PrimitiveType::kU8).i, 255);
  EXPECT_EQ(cv(I(300, PrimitiveType::kS32), PrimitiveType::kU8).i, 44);  // wraps
  EXPECT_EQ(cv(I(-1, PrimitiveType::kS8), PrimitiveType::kU16).i, 65535);
  EXPECT_EQ(cv(I(16777217, PrimitiveType::kS32), PrimitiveType::kF32).f, 16777216.0f);
  EXPECT_EQ(cv(I(-1, PrimitiveType::kU64), PrimitiveType::kF32).f, 18446744073709551616.0f);
  EXPECT_EQ(cv(F(0.3f), PrimitiveType::kBF16).f, 0.30078125f);
  EXPECT_EQ(cv(F(2.0f), PrimitiveType::kPred).i, 1);
  EXPECT_EQ(cv(I(1, PrimitiveType::kPred), PrimitiveType::kF32).f, 1.0f);
}

TEST(HloElementwise, BitcastConvertReinterpretsBits) {
  auto bc = [](Scalar x, PrimitiveType to) {
    return ApplyUnary(ElementwiseOp{Opcode::kBitcastConvert, to}, x);
  };
  EXPECT_EQ(bc(F(1.0f), PrimitiveType::kS32).i, 0x3f800000);
  EXPECT_EQ(bc(F(-2.0f), PrimitiveType::kU32).i, 0xc0000000LL);
  EXPECT_EQ(bc(I(0x3f80, PrimitiveType::kU16), PrimitiveType::kBF16).f, 1.0f);
  EXPECT_EQ(bc(F(1.0f, PrimitiveType::kF16), PrimitiveType::kS16).i, 0x3c00);
}

TEST(HloElementwise, ReducePrecisionToBf16AndF16Ranges) {
  auto rp = [](float x, int e, int m) {
    ElementwiseOp op{Opcode::kReducePrecision, PrimitiveType::kF32};
    op.exponent_bits = e;
    op.mantissa_bits = m;
    return ApplyUnary(op, F(x)).f;
  };
  EXPECT_EQ(rp(0.3f, 8, 7), RoundToType(PrimitiveType::kBF16, 0.3f));
  EXPECT_EQ(rp(1.00390625f, 8, 7), 1.0f);
  EXPECT_TRUE(std::isinf(rp(70000.0f, 5, 10)));  // above f16's range
  EXPECT_EQ(rp(1e-9f, 5, 10), 0.0f);             // below it
  EXPECT_EQ(rp(0.1f, 5, 10), 0.0999755859375f);
  EXPECT_TRUE(std::isnan(rp(std::nanf(""), 5, 10)));
}

TEST(HloElementwise, SelectAndClampBroadcastScalars) {
  Array pred = Array::Zeros(PrimitiveType::kPred, {3});
  pred.i = {1, 0, 1};
  const Array a = *testing::F32({3}, {1, 2, 3}).array;
  const Array b = *testing::F32({3}, {-1, -2, -3}).array;
  EXPECT_EQ(Select(pred, a, b).f, (FloatStore{1, -2, 3}));
  const Array lo = *testing::F32({}, {0}).array;
  const Array hi = *testing::F32({}, {2.5f}).array;
  const Array x = *testing::F32({4}, {-1, 1, 2, 9}).array;
  EXPECT_EQ(Clamp(lo, x, hi, PrimitiveType::kF32).f, (FloatStore{0, 1, 2, 2.5f}));
}

}  // namespace
}  // namespace tpuemu::engine::hlo
