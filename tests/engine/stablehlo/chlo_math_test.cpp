// The chlo special functions decomposed as XLA's chlo legalization does
// (engine/stablehlo/lower_chlo_math.cpp), against values computed to 30 digits (mpmath, at the
// f32 inputs) and rounded to f32. The bounds are what XLA's decompositions reach in f32 (the
// same operations in the same order): erfc 4 ulps, erf_inv 8, lgamma, digamma, bessel_i1e,
// zeta and polygamma 16 (the series lose a few bits in f32 where the result is small); the
// special values (poles, infinities, NaN) are exact.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "engine/hlo/evaluator.h"
#include "engine/stablehlo/import.h"

namespace tpuemu::engine::stablehlo {
namespace {

// Distance in f32 steps between a and b (0 for equal or both NaN).
int64_t Ulps(float a, float b) {
  if (std::isnan(a) && std::isnan(b)) return 0;
  if (std::isnan(a) || std::isnan(b)) return INT64_MAX;
  auto key = [](float f) {
    int32_t i;
    std::memcpy(&i, &f, sizeof i);
    return i < 0 ? int64_t{INT32_MIN} - i : int64_t{i};
  };
  return std::llabs(key(a) - key(b));
}

std::string List(const std::vector<float>& v) {
  std::string s;
  for (size_t k = 0; k < v.size(); ++k) {
    char buf[32];
    if (std::isinf(v[k])) {
      std::snprintf(buf, sizeof buf, "%s", v[k] > 0 ? "0x7F800000" : "0xFF800000");
    } else if (std::isnan(v[k])) {
      std::snprintf(buf, sizeof buf, "0x7FC00000");
    } else {
      std::snprintf(buf, sizeof buf, "%.9e", static_cast<double>(v[k]));
    }
    s += (k ? ", " : "") + std::string(buf);
  }
  return s;
}

// op(x[, y]) over f32 vectors through a StableHLO module.
std::vector<float> Apply(const std::string& op, const std::vector<float>& x,
                         const std::vector<float>& y = {}, const std::string& type = "f32") {
  const std::string t = "tensor<" + std::to_string(x.size()) + "x" + type + ">";
  std::string text = "func.func @main() -> " + t + " {\n  %x = stablehlo.constant dense<[" +
                     List(x) + "]> : " + t + "\n";
  if (y.empty()) {
    text += "  %r = \"chlo." + op + "\"(%x) : (" + t + ") -> " + t + "\n";
  } else {
    text += "  %y = stablehlo.constant dense<[" + List(y) + "]> : " + t + "\n";
    text += "  %r = \"chlo." + op + "\"(%x, %y) : (" + t + ", " + t + ") -> " + t + "\n";
  }
  text += "  return %r : " + t + "\n}\n";
  Result<hlo::Module> m = ParseStableHlo(text);
  EXPECT_TRUE(m.ok()) << m.status().message() << "\n" << text;
  if (!m.ok()) return {};
  Result<hlo::EvalResult> r = hlo::Evaluate(*m, {{}});
  EXPECT_TRUE(r.ok()) << r.status().message();
  if (!r.ok()) return {};
  const hlo::Array& a = *r->outputs[0].array;
  return std::vector<float>(a.f.begin(), a.f.end());
}

void ExpectClose(const std::string& op, const std::vector<float>& x, const std::vector<float>& want,
                 int64_t max_ulps) {
  const std::vector<float> got = Apply(op, x);
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < want.size(); ++k) {
    // At a zero of the function ulps mean nothing: there, within 1e-6 absolute.
    const bool near_zero = std::fabs(want[k]) < 1e-6f && std::fabs(got[k]) < 1e-6f;
    EXPECT_TRUE(near_zero || Ulps(got[k], want[k]) <= max_ulps)
        << op << "(" << x[k] << ") = " << got[k] << ", want " << want[k] << " ("
        << Ulps(got[k], want[k]) << " ulps)";
  }
}

constexpr float kInf = std::numeric_limits<float>::infinity();

TEST(StablehloChloMath, Erfc) {
  ExpectClose(
      "erfc", {0, 0.5, 1, 2, -1, 3, -2.5, 9},
      {1.0f, 0.4795001149177551f, 0.15729920566082f, 0.004677734803408384f, 1.8427008390426636f,
       2.2090496713644825e-05f, 1.9995930194854736f, 4.137031708073991e-37f},
      4);
  ExpectClose("erfc", {kInf, -kInf, 20}, {0, 2, 0}, 0);
}

TEST(StablehloChloMath, ErfInv) {
  ExpectClose(
      "erf_inv", {0, 0.5, -0.9, 0.999, 0.1},
      {0.0f, 0.4769362807273865f, -1.1630871295928955f, 2.326756238937378f, 0.08885598927736282f},
      8);
  ExpectClose("erf_inv", {1, -1}, {kInf, -kInf}, 0);
}

TEST(StablehloChloMath, Lgamma) {
  ExpectClose(
      "lgamma", {1, 2, 0.5, 3, 10, -0.5, 2.5, 100, -2.5},
      {0.0f, 0.0f, 0.5723649263381958f, 0.6931471824645996f, 12.801827430725098f,
       1.2655121088027954f, 0.28468286991119385f, 359.13421630859375f, -0.056243717670440674f},
      16);
  // Poles and infinities: lgamma(0) = lgamma(-3) = lgamma(+/-inf) = +inf.
  ExpectClose("lgamma", {0, -3, kInf, -kInf}, {kInf, kInf, kInf, kInf}, 0);
}

TEST(StablehloChloMath, Digamma) {
  ExpectClose(
      "digamma", {1, 0.5, 2, 10, -0.5, 3.7, 100, -2.5},
      {-0.5772156715393066f, -1.9635100364685059f, 0.42278432846069336f, 2.2517526149749756f,
       0.036489974707365036f, 1.1671535968780518f, 4.600162029266357f, 1.1031566858291626f},
      16);
  const std::vector<float> poles = Apply("digamma", {0, -1, -4});
  ASSERT_EQ(poles.size(), 3u);
  EXPECT_EQ(poles[0], -kInf);
  EXPECT_TRUE(std::isnan(poles[1]) && std::isnan(poles[2]));
}

TEST(StablehloChloMath, BesselI1e) {
  ExpectClose(
      "bessel_i1e", {0, 0.5, 1, 2, -3, 8, 10, 50},
      {0.0f, 0.15642079710960388f, 0.207910418510437f, 0.2152692824602127f, -0.19682671129703522f,
       0.13414248824119568f, 0.12126268446445465f, 0.05599312484264374f},
      16);
}

TEST(StablehloChloMath, ZetaAndPolygamma) {
  const std::vector<float> zeta =
      Apply("zeta", {2, 3, 2, 4, 2.5, 6, 1, 0.5, 2}, {1, 2, 0.5, 3, 10, 0.3, 1, 1, -2});
  const std::vector<float> want_zeta = {1.644934058189392f,    0.2020568996667862f,
                                        4.934802055358887f,    0.019823234528303146f,
                                        0.022728698328137398f, 1371.9566650390625f};
  ASSERT_EQ(zeta.size(), 9u);
  for (size_t k = 0; k < want_zeta.size(); ++k) {
    EXPECT_LE(Ulps(zeta[k], want_zeta[k]), 16) << "zeta #" << k << " = " << zeta[k];
  }
  EXPECT_EQ(zeta[6], kInf);          // x = 1: the harmonic series
  EXPECT_TRUE(std::isnan(zeta[7]));  // x < 1
  EXPECT_EQ(zeta[8], kInf);          // a pole at integer q <= 0, x even
  const std::vector<float> pg =
      Apply("polygamma", {1, 2, 0, 3, 1, 1.5, -1}, {1, 1.5, 2, 0.7, 10, 1, 1});
  const std::vector<float> want_pg = {1.644934058189392f, -0.8287966251373291f,
                                      0.42278432846069336f, 25.879152297973633f,
                                      0.10516633838415146f};
  ASSERT_EQ(pg.size(), 7u);
  for (size_t k = 0; k < want_pg.size(); ++k) {
    EXPECT_LE(Ulps(pg[k], want_pg[k]), 16) << "polygamma #" << k << " = " << pg[k];
  }
  EXPECT_TRUE(std::isnan(pg[5]) && std::isnan(pg[6]));  // n not a natural number
}

TEST(StablehloChloMath, NextAfterStepsOneUlp) {
  const std::vector<float> got =
      Apply("next_after", {1, 1, 0, 0, 2, -1, 3}, {2, 0, 1, -1, 2, -kInf, NAN});
  ASSERT_EQ(got.size(), 7u);
  EXPECT_EQ(got[0], std::nextafter(1.0f, 2.0f));
  EXPECT_EQ(got[1], std::nextafter(1.0f, 0.0f));
  EXPECT_EQ(got[2], std::nextafter(0.0f, 1.0f));  // the smallest subnormal
  EXPECT_EQ(got[3], std::nextafter(0.0f, -1.0f));
  EXPECT_TRUE(std::signbit(got[3]));
  EXPECT_EQ(got[4], 2.0f);
  EXPECT_EQ(got[5], std::nextafter(-1.0f, -kInf));
  EXPECT_TRUE(std::isnan(got[6]));
}

TEST(StablehloChloMath, Bf16ComputesInF32AndConjLowers) {
  const std::vector<float> got = Apply("lgamma", {3, 10}, {}, "bf16");
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], 0.69140625f);  // 0.693147 rounded to bf16
  EXPECT_EQ(got[1], 12.8125f);     // 12.8018 rounded to bf16
  Result<hlo::Module> conj = ParseStableHlo(
      "func.func @main(%z: tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>> {\n"
      "  %r = \"chlo.conj\"(%z) : (tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>>\n"
      "  return %r : tensor<2xcomplex<f32>>\n}\n");
  ASSERT_TRUE(conj.ok()) << conj.status().message();
  const hlo::Computation& entry = conj->entry_computation();
  EXPECT_EQ(entry.instructions[static_cast<size_t>(entry.root)].opcode, hlo::Opcode::kComplex);
}

}  // namespace
}  // namespace tpuemu::engine::stablehlo
