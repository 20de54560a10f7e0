#include "service/faults/seeded_rng.h"

#include <gtest/gtest.h>

#include <vector>

namespace tpuemu::service {
namespace {

std::vector<double> Draws(SeededRng& rng, int n) {
  std::vector<double> out;
  for (int i = 0; i < n; ++i) out.push_back(rng.Uniform());
  return out;
}

TEST(SeededRngTest, TheSameSeedAndStreamGiveTheSameDraws) {
  SeededRng a(42, "chaos"), b(42, "chaos");
  EXPECT_EQ(Draws(a, 100), Draws(b, 100));
}

TEST(SeededRngTest, SeedsAndStreamsAreIndependent) {
  SeededRng base(42, "chaos"), other_seed(43, "chaos"), other_stream(42, "preemption");
  const std::vector<double> draws = Draws(base, 20);
  EXPECT_NE(draws, Draws(other_seed, 20));
  EXPECT_NE(draws, Draws(other_stream, 20));
}

TEST(SeededRngTest, UniformStaysInTheUnitIntervalWithAPlausibleMean) {
  SeededRng rng(7, "chaos");
  double sum = 0;
  for (int i = 0; i < 10000; ++i) {
    const double u = rng.Uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
  }
  EXPECT_NEAR(sum / 10000, 0.5, 0.02);  // about 7 standard errors of the mean
}

TEST(SeededRngTest, BernoulliEdgesDrawNothing) {
  SeededRng a(1, "s"), b(1, "s");
  for (int i = 0; i < 10; ++i) {
    EXPECT_FALSE(a.Bernoulli(0));
    EXPECT_FALSE(a.Bernoulli(-1));
    EXPECT_TRUE(a.Bernoulli(1));
    EXPECT_TRUE(a.Bernoulli(2));
  }
  // No draw was spent: a's stream is where b's is.
  EXPECT_EQ(a.Uniform(), b.Uniform());
}

TEST(SeededRngTest, BernoulliFiresAboutAsOftenAsAsked) {
  SeededRng rng(3, "preemption");
  int hits = 0;
  for (int i = 0; i < 10000; ++i) hits += rng.Bernoulli(0.25) ? 1 : 0;
  EXPECT_NEAR(hits, 2500, 250);  // about 6 standard deviations
}

}  // namespace
}  // namespace tpuemu::service
