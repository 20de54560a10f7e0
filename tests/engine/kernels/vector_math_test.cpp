#include "engine/kernels/vector_math.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace tpuemu::engine {
namespace {

constexpr float kInfinity = std::numeric_limits<float>::infinity();

// |got - want| in units of the f32 spacing at want.
double Ulps(float got, double want) {
  const float w = static_cast<float>(want);
  const double spacing = std::nextafter(std::abs(w), kInfinity) - std::abs(w);
  return std::abs(static_cast<double>(got) - want) / spacing;
}

std::vector<float> Uniform(float lo, float hi, int n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = dist(rng);
  return v;
}

TEST(VectorMathTest, ExpIsWithinOneUlpOverTheNormalRange) {
  const std::vector<float> x = Uniform(-87.0f, 88.7f, 200000, 1);
  std::vector<float> y(x.size());
  ExpArray(x.data(), y.data(), static_cast<int64_t>(x.size()));
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) worst = std::max(worst, Ulps(y[i], std::exp(double{x[i]})));
  EXPECT_LE(worst, 1.0);
}

TEST(VectorMathTest, ExpEdgeCases) {
  const std::vector<float> x = {0.0f,    -0.0f,   88.72f,     88.73f,    1000.0f,
                                -100.0f, -104.0f, -kInfinity, kInfinity, std::nanf("")};
  std::vector<float> y(x.size());
  ExpArray(x.data(), y.data(), static_cast<int64_t>(x.size()));
  EXPECT_EQ(y[0], 1.0f);
  EXPECT_EQ(y[1], 1.0f);
  EXPECT_TRUE(std::isfinite(y[2]));
  EXPECT_LE(Ulps(y[2], std::exp(double{88.72f})), 1.0);
  EXPECT_EQ(y[3], kInfinity);
  EXPECT_EQ(y[4], kInfinity);
  EXPECT_NEAR(y[5], std::exp(-100.0), 1e-45);  // subnormal result
  EXPECT_EQ(y[6], 0.0f);
  EXPECT_EQ(y[7], 0.0f);
  EXPECT_EQ(y[8], kInfinity);
  EXPECT_TRUE(std::isnan(y[9]));
}

TEST(VectorMathTest, TanhIsWithinTwoUlpsAndOdd) {
  std::vector<float> x = Uniform(-9.0f, 9.0f, 100000, 2);
  const std::vector<float> small = Uniform(-0.7f, 0.7f, 100000, 3);
  x.insert(x.end(), small.begin(), small.end());
  std::vector<float> y(x.size());
  TanhArray(x.data(), y.data(), static_cast<int64_t>(x.size()));
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    worst = std::max(worst, Ulps(y[i], std::tanh(double{x[i]})));
  }
  EXPECT_LE(worst, 2.0);
  const std::vector<float> edges = {0.0f,   -0.0f,     1e-30f,     20.0f,
                                    -20.0f, kInfinity, -kInfinity, std::nanf("")};
  std::vector<float> t(edges.size());
  TanhArray(edges.data(), t.data(), static_cast<int64_t>(edges.size()));
  EXPECT_EQ(t[0], 0.0f);
  EXPECT_TRUE(std::signbit(t[1]));
  EXPECT_EQ(t[2], 1e-30f);
  EXPECT_EQ(t[3], 1.0f);
  EXPECT_EQ(t[4], -1.0f);
  EXPECT_EQ(t[5], 1.0f);
  EXPECT_EQ(t[6], -1.0f);
  EXPECT_TRUE(std::isnan(t[7]));
}

TEST(VectorMathTest, GeluAndItsGradientMatchTheFormulaInPlace) {
  std::vector<float> x = Uniform(-6.0f, 6.0f, 10000, 4);
  const std::vector<float> dy = Uniform(-1.0f, 1.0f, 10000, 5);
  auto gelu = [](double v) {
    return 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
  };
  std::vector<float> grad(x.size());
  GeluGradArray(x.data(), dy.data(), grad.data(), static_cast<int64_t>(x.size()));
  const std::vector<float> in = x;
  GeluArray(x.data(), x.data(), static_cast<int64_t>(x.size()));  // in place
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_NEAR(x[i], gelu(in[i]), 2e-6 * (1 + std::abs(in[i]))) << in[i];
    const double h = 1e-3;
    const double fd = dy[i] * (gelu(in[i] + h) - gelu(in[i] - h)) / (2 * h);
    EXPECT_NEAR(grad[i], fd, 1e-4) << in[i];
  }
}

TEST(VectorMathTest, ExpShiftSumReturnsTheSumOfWhatItWrote) {
  const std::vector<float> x = Uniform(-5.0f, 5.0f, 1001, 6);  // not a multiple of the lanes
  std::vector<float> y(x.size());
  const double sum = ExpShiftSumArray(x.data(), 2.5f, y.data(), static_cast<int64_t>(x.size()));
  double want = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_LE(Ulps(y[i], std::exp(double{x[i] - 2.5f})), 1.0);  // the shift is f32 math
    want += y[i];
  }
  EXPECT_NEAR(sum, want, 1e-9 * want);
}

}  // namespace
}  // namespace tpuemu::engine
