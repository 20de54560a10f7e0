// rng-bit-generator reproduces XLA's ThreeFry2x32-20 and Philox4x32-10 bit for bit: the
// Random123 known-answer vectors, XLA's counter/key layout of the state, and the output order.
#include <gtest/gtest.h>

#include "tests/engine/hlo/hlo_test_util.h"

namespace tpuemu::engine::hlo {
namespace {

using testing::Ints;
using testing::MustRun;

std::string Rng(const std::string& algorithm, const std::string& state, const std::string& data) {
  return "HloModule m\nENTRY e {\n  s = " + state + " parameter(0)\n  ROOT r = (" + state + ", " +
         data + ") rng-bit-generator(s), algorithm=" + algorithm + "\n}\n";
}

std::vector<uint64_t> Bits(const Value& v) {
  std::vector<uint64_t> out;
  for (int64_t x : v.array->i) out.push_back(static_cast<uint64_t>(x));
  return out;
}

Value U64(std::vector<uint64_t> v) {
  std::vector<int64_t> s(v.begin(), v.end());
  return Ints(PrimitiveType::kU64, {static_cast<int64_t>(v.size())}, s);
}

TEST(HloEvalRng, ThreeFryKnownAnswers) {
  const std::string text = Rng("rng_three_fry", "u64[2]", "u64[1]");
  Value out = MustRun(text, {U64({0, 0})});
  EXPECT_EQ(Bits(out.elements[1]), std::vector<uint64_t>{0x99ba4efe6b200159ull});
  EXPECT_EQ(Bits(out.elements[0]), (std::vector<uint64_t>{0, 1}));  // key, counter + 1
  out = MustRun(text, {U64({~0ull, ~0ull})});
  EXPECT_EQ(Bits(out.elements[1]), std::vector<uint64_t>{0xbb002be71cb996fcull});
  out = MustRun(text, {U64({0x0370734413198a2eull, 0x85a308d3243f6a88ull})});
  EXPECT_EQ(Bits(out.elements[1]), std::vector<uint64_t>{0x483df7a0c4923a9cull});
}

TEST(HloEvalRng, ThreeFry32BitWordsPairAlongTheSplitDimension) {
  const Value out = MustRun(Rng("rng_three_fry", "u64[2]", "u32[4]"), {U64({0, 0})});
  const std::vector<uint64_t> bits = Bits(out.elements[1]);
  ASSERT_EQ(bits.size(), 4u);
  EXPECT_EQ(bits[0], 0x6b200159u);                                  // counter 0, word 0
  EXPECT_EQ(bits[1], 0x99ba4efeu);                                  // counter 0, word 1
  EXPECT_EQ(Bits(out.elements[0]), (std::vector<uint64_t>{0, 2}));  // two counters used
}

TEST(HloEvalRng, PhiloxKnownAnswers) {
  const std::string text = Rng("rng_philox", "u64[3]", "u32[4]");
  Value out = MustRun(text, {U64({0, 0, 0})});
  EXPECT_EQ(Bits(out.elements[1]),
            (std::vector<uint64_t>{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(Bits(out.elements[0]), (std::vector<uint64_t>{0, 1, 0}));
  out = MustRun(text, {U64({0x299f31d0a4093822ull, 0x85a308d3243f6a88ull, 0x0370734413198a2eull})});
  EXPECT_EQ(Bits(out.elements[1]),
            (std::vector<uint64_t>{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

TEST(HloEvalRng, DefaultIsPhiloxAndAShortStateUsesTheKeyAsTheHighCounter) {
  const Value philox = MustRun(Rng("rng_philox", "u64[2]", "u32[6]"), {U64({0, 0})});
  const Value fallback = MustRun(Rng("rng_default", "u64[2]", "u32[6]"), {U64({0, 0})});
  EXPECT_EQ(Bits(philox.elements[1]), Bits(fallback.elements[1]));
  const std::vector<uint64_t> bits = Bits(philox.elements[1]);
  EXPECT_EQ(bits[0], 0x6627e8d5u);
  EXPECT_EQ(Bits(philox.elements[0]), (std::vector<uint64_t>{0, 2}));  // 6 words: 2 blocks
}

TEST(HloEvalRng, SixtyFourBitPhiloxJoinsWordPairs) {
  const Value out = MustRun(Rng("rng_philox", "u64[3]", "u64[2]"), {U64({0, 0, 0})});
  EXPECT_EQ(Bits(out.elements[1]),
            (std::vector<uint64_t>{0xe169c58d6627e8d5ull, 0x9b00dbd8bc57ac4cull}));
}

}  // namespace
}  // namespace tpuemu::engine::hlo
