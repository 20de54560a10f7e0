#include "engine/hardware/numerics.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace tpuemu::engine {
namespace {

float FromBits(std::uint32_t u) { return std::bit_cast<float>(u); }
std::uint32_t ToBits(float x) { return std::bit_cast<std::uint32_t>(x); }

TEST(Bf16Test, RoundsTiesToEven) {
  // 1 + 2^-8 lies halfway between 1 (even mantissa) and 1 + 2^-7 (odd): goes down to even.
  EXPECT_EQ(F32ToBf16Bits(1.0f + 0x1p-8f), 0x3f80);
  // 1 + 3·2^-8 lies halfway between 1 + 2^-7 (odd) and 1 + 2^-6 (even): goes up to even.
  EXPECT_EQ(F32ToBf16Bits(1.0f + 3 * 0x1p-8f), 0x3f82);
  // Just above / below the tie rounds to nearest.
  EXPECT_EQ(F32ToBf16Bits(1.0f + 0x1p-8f + 0x1p-20f), 0x3f81);
  EXPECT_EQ(F32ToBf16Bits(1.0f + 0x1p-8f - 0x1p-20f), 0x3f80);
  EXPECT_EQ(F32ToBf16Bits(1.0f), 0x3f80);
  EXPECT_EQ(RoundToBf16(3.14159265f), 3.140625f);
}

TEST(Bf16Test, NegativeValuesRoundSymmetrically) {
  EXPECT_EQ(F32ToBf16Bits(-(1.0f + 0x1p-8f)), 0xbf80);
  EXPECT_EQ(F32ToBf16Bits(-(1.0f + 3 * 0x1p-8f)), 0xbf82);
  EXPECT_EQ(RoundToBf16(-3.14159265f), -3.140625f);
  EXPECT_EQ(F32ToBf16Bits(-0.0f), 0x8000);
}

TEST(Bf16Test, OverflowsToInfinity) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(RoundToBf16(std::numeric_limits<float>::max()), inf);
  EXPECT_EQ(RoundToBf16(-std::numeric_limits<float>::max()), -inf);
  EXPECT_EQ(RoundToBf16(inf), inf);
  // Largest finite bf16 is 0x7f7f; below the midpoint to the next (inf) it stays finite, the tie
  // (0x7f7f is odd) goes to inf.
  EXPECT_EQ(F32ToBf16Bits(FromBits(0x7f7f7fffu)), 0x7f7f);
  EXPECT_EQ(F32ToBf16Bits(FromBits(0x7f7f8000u)), 0x7f80);
}

TEST(Bf16Test, NanStaysNanWithSign) {
  EXPECT_TRUE(std::isnan(RoundToBf16(std::numeric_limits<float>::quiet_NaN())));
  // A NaN whose payload is only in the low 16 bits must not round to inf.
  const Bf16Bits low_payload = F32ToBf16Bits(FromBits(0x7f800001u));
  EXPECT_TRUE(std::isnan(Bf16BitsToF32(low_payload)));
  EXPECT_EQ(low_payload & 0x8000, 0);
  const Bf16Bits negative = F32ToBf16Bits(FromBits(0xffc00001u));
  EXPECT_TRUE(std::isnan(Bf16BitsToF32(negative)));
  EXPECT_EQ(negative & 0x8000, 0x8000);
  // 0x7fffffff would carry into the sign bit under plain rounding.
  EXPECT_TRUE(std::isnan(RoundToBf16(FromBits(0x7fffffffu))));
}

TEST(Bf16Test, SubnormalsFlushToSignedZero) {
  EXPECT_EQ(F32ToBf16Bits(std::numeric_limits<float>::denorm_min()), 0x0000);
  EXPECT_EQ(F32ToBf16Bits(-std::numeric_limits<float>::denorm_min()), 0x8000);
  // The largest f32 subnormal would round up to the smallest normal; it is flushed instead.
  EXPECT_EQ(F32ToBf16Bits(FromBits(0x007fffffu)), 0x0000);
  EXPECT_EQ(F32ToBf16Bits(std::numeric_limits<float>::min()), 0x0080);  // smallest normal kept
  EXPECT_EQ(FlushBf16Subnormal(FromBits(0x00010000u)), 0.0f);
  EXPECT_EQ(ToBits(FlushBf16Subnormal(FromBits(0x80010000u))), 0x80000000u);
  EXPECT_EQ(FlushBf16Subnormal(1.5f), 1.5f);
}

TEST(Bf16Test, EveryNormalBf16RoundTripsExactly) {
  for (std::uint32_t b = 0; b <= 0xffff; ++b) {
    const auto bits = static_cast<Bf16Bits>(b);
    const float f = Bf16BitsToF32(bits);
    EXPECT_EQ(ToBits(f), b << 16);
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(Bf16BitsToF32(F32ToBf16Bits(f))));
    } else if ((b & 0x7f80) != 0) {
      ASSERT_EQ(F32ToBf16Bits(f), bits) << std::hex << b;
    }
  }
}

TEST(Bf16Test, TruncClearsTheLow16Bits) {
  EXPECT_EQ(ToBits(TruncToBf16(FromBits(0x3fffffffu))), 0x3fff0000u);
  EXPECT_EQ(TruncToBf16(1.0f + 0x1p-8f + 0x1p-9f), 1.0f);  // truncation, not rounding
  EXPECT_EQ(TruncToBf16(-2.75f), -2.75f);
}

TEST(SplitTest, Split3ReconstructsNormalValuesExactly) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> mantissa(-2.0f, 2.0f);
  std::uniform_int_distribution<int> exponent(-60, 60);
  for (int i = 0; i < 100000; ++i) {
    const float x = std::ldexp(mantissa(rng), exponent(rng));
    const Split3Parts p = Split3(x);
    for (float part : {p.hi, p.mid, p.lo}) {
      ASSERT_EQ(ToBits(part) & 0xffffu, 0u) << x << " has a part that is not a bf16";
    }
    ASSERT_EQ(p.hi + p.mid + p.lo, x) << x;  // the three parts hold all 24 bits
    ASSERT_EQ(p.hi, TruncToBf16(x));
    ASSERT_LE(std::abs(p.mid), std::abs(x) * 0x1p-7f);
    ASSERT_LE(std::abs(p.lo), std::abs(x) * 0x1p-15f);
  }
}

TEST(SplitTest, Split2IsTruncPlusRoundedRemainder) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(-100.0f, 100.0f);
  for (int i = 0; i < 100000; ++i) {
    const float x = dist(rng);
    const Split2Parts p = Split2(x);
    ASSERT_EQ(p.hi, TruncToBf16(x));
    ASSERT_EQ(p.lo, RoundToBf16(x - p.hi));
    // hi + lo keeps 16 significant bits: relative error at most 2^-16.
    ASSERT_LE(std::abs(static_cast<double>(p.hi) + p.lo - x), std::abs(x) * 0x1p-16) << x;
  }
  // 1 + 2^-8 is not a bf16 (DEFAULT would round it to 1); Split2 carries the 2^-8 in lo.
  const Split2Parts p = Split2(1.0f + 0x1p-8f);
  EXPECT_EQ(p.hi, 1.0f);
  EXPECT_EQ(p.lo, 0x1p-8f);
}

TEST(SplitTest, InfinitySplitsIntoInfAndNan) {
  const float inf = std::numeric_limits<float>::infinity();
  const Split3Parts p = Split3(-inf);
  EXPECT_EQ(p.hi, -inf);
  EXPECT_TRUE(std::isnan(p.mid));  // inf - inf: the NaN that nan_to_zero later removes
  EXPECT_TRUE(std::isnan(p.lo));
  EXPECT_TRUE(std::isnan(Split2(inf).lo));
  EXPECT_EQ(NanToZero(std::nanf("")), 0.0f);
  EXPECT_EQ(NanToZero(-inf), -inf);
  EXPECT_EQ(NanToZero(2.5f), 2.5f);
}

TEST(SplitTest, BulkFunctionsMatchScalarOnes) {
  std::mt19937 rng(3);
  std::normal_distribution<float> dist(0.0f, 10.0f);
  std::vector<float> x(1001);
  for (float& v : x) v = dist(rng);
  x[5] = std::numeric_limits<float>::infinity();
  x[6] = std::numeric_limits<float>::denorm_min();
  const std::size_t n = x.size();
  std::vector<float> f0(n), f1(n), f2(n);
  std::vector<Bf16Bits> b0(n), b1(n), b2(n);

  RoundToBf16(x.data(), f0.data(), n);
  RoundToBf16Bits(x.data(), b0.data(), n);
  for (std::size_t i = 0; i < n; ++i) {
    ASSERT_EQ(ToBits(f0[i]), ToBits(RoundToBf16(x[i])));
    ASSERT_EQ(b0[i], F32ToBf16Bits(x[i]));
  }
  Split3(x.data(), f0.data(), f1.data(), f2.data(), n);
  Split3(x.data(), b0.data(), b1.data(), b2.data(), n);
  for (std::size_t i = 0; i < n; ++i) {
    const Split3Parts p = Split3(x[i]);
    ASSERT_EQ(ToBits(f0[i]), ToBits(p.hi));
    ASSERT_EQ(b0[i], F32ToBf16Bits(p.hi));
    ASSERT_EQ(b1[i], F32ToBf16Bits(p.mid));
    if (!std::isnan(p.lo)) {
      ASSERT_EQ(ToBits(f2[i]), ToBits(p.lo));
    }
  }
  Split2(x.data(), f0.data(), f1.data(), n);
  Split2(x.data(), b0.data(), b1.data(), n);
  for (std::size_t i = 0; i < n; ++i) {
    const Split2Parts p = Split2(x[i]);
    ASSERT_EQ(ToBits(f0[i]), ToBits(p.hi));
    ASSERT_EQ(b1[i], F32ToBf16Bits(p.lo));
  }
}

TEST(PrecisionTest, ParsesEveryJaxAlias) {
  const std::pair<const char*, Precision> cases[] = {
      {"default", Precision::kDefault},
      {"fastest", Precision::kDefault},
      {"bfloat16", Precision::kDefault},
      {"DEFAULT", Precision::kDefault},
      {"high", Precision::kHigh},
      {"bfloat16_3x", Precision::kHigh},
      {"tensorfloat32", Precision::kHigh},
      {"highest", Precision::kHighest},
      {"float32", Precision::kHighest},
      {"Highest", Precision::kHighest},
      {"f32", Precision::kF32},
  };
  for (const auto& [name, expected] : cases) {
    Result<Precision> parsed = ParsePrecision(name);
    ASSERT_TRUE(parsed.ok()) << name;
    EXPECT_EQ(*parsed, expected) << name;
  }
}

TEST(PrecisionTest, RejectsUnknownNamesWithInvalidArgument) {
  for (const char* name : {"", "fp16", "highestt", "tf32"}) {
    Result<Precision> parsed = ParsePrecision(name);
    ASSERT_FALSE(parsed.ok()) << name;
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(parsed.status().message().find("precision"), std::string::npos);
  }
}

TEST(PrecisionTest, NamesRoundTripAndPassCounts) {
  for (Precision p :
       {Precision::kDefault, Precision::kHigh, Precision::kHighest, Precision::kF32}) {
    Result<Precision> parsed = ParsePrecision(PrecisionName(p));
    ASSERT_TRUE(parsed.ok()) << PrecisionName(p);
    EXPECT_EQ(*parsed, p);
  }
  EXPECT_EQ(MxuPasses(Precision::kDefault), 1);
  EXPECT_EQ(MxuPasses(Precision::kHigh), 3);
  EXPECT_EQ(MxuPasses(Precision::kHighest), 6);
  EXPECT_EQ(MxuPasses(Precision::kF32), 6);
}

}  // namespace
}  // namespace tpuemu::engine
