#include "engine/kernels/gemm.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "engine/hardware/numerics.h"
#include "engine/kernels/gemm_onednn.h"
#include "engine/kernels/gemm_pass.h"
#include "engine/kernels/isa.h"
#include "engine/runtime/pool.h"
#include "tests/engine/kernels/gemm_test_matrices.h"

namespace tpuemu::engine {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr double kF32Eps = 0x1p-24;  // unit roundoff of f32
// Worst-case scaled errors of one product (see ErrorAgainstDoubleIsOrderedByPrecision), with a
// little room for the f32 accumulation of short sums.
constexpr double kDefaultBound = 0x1p-7 * 1.01;
constexpr double kHighBound = 0x1p-13;
constexpr double kHighestBound = 0x1p-20;

// Runs Matmul into a C pre-filled with NaN, so a path that forgets to write C shows.
std::vector<float> RunMatmul(const std::vector<float>& a, const std::vector<float>& b, int64_t m,
                             int64_t n, int64_t k, Precision precision, GemmBackend backend) {
  std::vector<float> c(static_cast<std::size_t>(m * n), std::nanf(""));
  Matmul(a.data(), b.data(), c.data(), m, n, k, precision, backend);
  return c;
}

// Exact-ish reference in double, and Σ|a||b| per element (the scale rounding errors live on).
struct Reference {
  std::vector<double> value;
  std::vector<double> abs_scale;
};
Reference DoubleMatmul(const std::vector<float>& a, const std::vector<float>& b, int64_t m,
                       int64_t n, int64_t k) {
  Reference r{std::vector<double>(static_cast<std::size_t>(m * n)),
              std::vector<double>(static_cast<std::size_t>(m * n))};
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0, scale = 0;
      for (int64_t p = 0; p < k; ++p) {
        const double prod = static_cast<double>(a[i * k + p]) * b[p * n + j];
        sum += prod;
        scale += std::abs(prod);
      }
      r.value[i * n + j] = sum;
      r.abs_scale[i * n + j] = scale;
    }
  }
  return r;
}

// max_ij |c - ref| / Σ|a||b|: the error in units of the element's natural scale.
double MaxScaledError(const std::vector<float>& c, const Reference& ref) {
  double worst = 0;
  for (std::size_t i = 0; i < c.size(); ++i) {
    worst = std::max(worst, std::abs(c[i] - ref.value[i]) / ref.abs_scale[i]);
  }
  return worst;
}

class GemmBackendTest : public ::testing::TestWithParam<GemmBackend> {
 protected:
  void SetUp() override {
    if (GetParam() == GemmBackend::kOneDnn && !OneDnnAvailable()) {
      GTEST_SKIP() << "oneDNN not compiled in or CPU lacks AVX512-BF16/AMX";
    }
    if (GetParam() == GemmBackend::kOneDnnF32 && !OneDnnF32Available()) {
      GTEST_SKIP() << "oneDNN not compiled in";
    }
  }
};

// jax-ml/jax#9973, reference §4.
const std::vector<float> kJaxX = {0.3744f, 0.1656f, 0.4707f, 0.1663f};
const std::vector<float> kJaxY = {0.3946f, 0.1186f, 0.1569f, 0.3145f};

TEST_P(GemmBackendTest, DefaultReproducesJax9973TpuOutputBitExactly) {
  const std::vector<float> c = RunMatmul(kJaxX, kJaxY, 2, 2, 2, Precision::kDefault, GetParam());
  const std::vector<float> tpu = {0.17405128f, 0.09669876f, 0.21180916f, 0.10805416f};
  for (int i = 0; i < 4; ++i) EXPECT_EQ(c[i], tpu[i]) << "element " << i;
}

TEST_P(GemmBackendTest, HighAndHighestMatchJax9973GoldenVectors) {
  const std::vector<float> x3 = {0.17371905f, 0.09648438f, 0.21183129f, 0.10812623f};
  const std::vector<float> x6 = {0.17372088f, 0.09648504f, 0.21183069f, 0.10812636f};
  const std::vector<float> high = RunMatmul(kJaxX, kJaxY, 2, 2, 2, Precision::kHigh, GetParam());
  const std::vector<float> highest =
      RunMatmul(kJaxX, kJaxY, 2, 2, 2, Precision::kHighest, GetParam());
  for (int i = 0; i < 4; ++i) {
    // The golden values are printed to 8 digits: allow that rounding plus one ulp.
    const double tol_high = 5e-9 + std::abs(x3[i]) * 0x1p-23;
    const double tol_highest = 5e-9 + std::abs(x6[i]) * 0x1p-23;
    EXPECT_NEAR(high[i], x3[i], tol_high) << "HIGH element " << i;
    EXPECT_NEAR(highest[i], x6[i], tol_highest) << "HIGHEST element " << i;
  }
  // HIGH must not be HIGHEST in disguise: element 0 differs by ~1.8e-6 between them.
  EXPECT_GT(std::abs(high[0] - highest[0]), 1e-6);
}

TEST_P(GemmBackendTest, ErrorAgainstDoubleIsOrderedByPrecision) {
  const int64_t m = 64, n = 64, k = 256;
  const std::vector<float> a = RandomMatrix(m, k, 1), b = RandomMatrix(k, n, 2);
  const Reference ref = DoubleMatmul(a, b, m, n, k);
  const double e_default =
      MaxScaledError(RunMatmul(a, b, m, n, k, Precision::kDefault, GetParam()), ref);
  const double e_high = MaxScaledError(RunMatmul(a, b, m, n, k, Precision::kHigh, GetParam()), ref);
  const double e_highest =
      MaxScaledError(RunMatmul(a, b, m, n, k, Precision::kHighest, GetParam()), ref);
  const double e_f32 = MaxScaledError(RunMatmul(a, b, m, n, k, Precision::kF32, GetParam()), ref);
  // Rigorous worst cases (u = 2^-24 for f32, bf16 keeps 8 significant bits):
  // DEFAULT: two RNE roundings of 2^-8 each -> 2^-7 of Σ|a||b|. Random signs average it down
  // (6e-4 seen), but never to the f32 level.
  EXPECT_LT(e_default, kDefaultBound);
  EXPECT_GT(e_default, 1e-4);
  // HIGH: hi + lo keeps 16 bits (2^-16 each) and drops lo·lo (up to 2^-14): < 2^-13. Seen 4e-6,
  // far below DEFAULT and far above f32.
  EXPECT_LT(e_high, kHighBound);
  EXPECT_GT(e_high, 1e-6);
  // HIGHEST: exact split, dropped terms <= 2^-21, then f32 accumulation, whose random-sign error
  // on this scale is a few u (seen 1.1u); 16u lets nothing with a 16-bit operand through.
  EXPECT_LT(e_highest, 16 * kF32Eps);
  EXPECT_LT(e_f32, 16 * kF32Eps);
  EXPECT_GT(e_default, 100 * e_highest);
  EXPECT_GT(e_high, 4 * e_highest);
  EXPECT_GT(e_default, 10 * e_high);
}

TEST_P(GemmBackendTest, OddShapesMatchDoubleReference) {
  struct Shape {
    int64_t m, n, k;
  };
  for (Shape s :
       {Shape{1, 1, 1}, Shape{3, 5, 7}, Shape{1, 33, 70}, Shape{9, 1, 130}, Shape{17, 19, 1}}) {
    const std::vector<float> a = RandomMatrix(s.m, s.k, 5), b = RandomMatrix(s.k, s.n, 6);
    const Reference ref = DoubleMatmul(a, b, s.m, s.n, s.k);
    const std::string shape =
        std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
    EXPECT_LT(MaxScaledError(RunMatmul(a, b, s.m, s.n, s.k, Precision::kDefault, GetParam()), ref),
              kDefaultBound)
        << shape;
    EXPECT_LT(MaxScaledError(RunMatmul(a, b, s.m, s.n, s.k, Precision::kHigh, GetParam()), ref),
              kHighBound)
        << shape;
    EXPECT_LT(MaxScaledError(RunMatmul(a, b, s.m, s.n, s.k, Precision::kHighest, GetParam()), ref),
              kHighestBound)
        << shape;
  }
}

TEST_P(GemmBackendTest, OneByOneIsTheRoundedProduct) {
  const std::vector<float> a = {1.0f + 0x1p-8f}, b = {3.0f};
  // DEFAULT rounds 1 + 2^-8 to 1 (tie to even); HIGH and HIGHEST keep it.
  EXPECT_EQ(RunMatmul(a, b, 1, 1, 1, Precision::kDefault, GetParam())[0], 3.0f);
  EXPECT_EQ(RunMatmul(a, b, 1, 1, 1, Precision::kHigh, GetParam())[0], 3.0f + 3 * 0x1p-8f);
  EXPECT_EQ(RunMatmul(a, b, 1, 1, 1, Precision::kHighest, GetParam())[0], 3.0f + 3 * 0x1p-8f);
  EXPECT_EQ(RunMatmul(a, b, 1, 1, 1, Precision::kF32, GetParam())[0], 3.0f + 3 * 0x1p-8f);
}

TEST_P(GemmBackendTest, EmptyContractionGivesZeros) {
  std::vector<float> c(6, std::nanf(""));
  Matmul(nullptr, nullptr, c.data(), 2, 3, 0, Precision::kHighest, GetParam());
  for (float v : c) EXPECT_EQ(v, 0.0f);
}

TEST_P(GemmBackendTest, InfinityPropagatesAtEveryPrecision) {
  // Row 0 of A holds +inf; B is finite and non-zero. The split's inf - inf = NaN lands in the
  // low passes only, and nan_to_zero keeps it out of the result: C row 0 is ±inf, never NaN.
  const std::vector<float> a = {kInf, 1.0f, 0.5f, 2.0f};
  const std::vector<float> b = {2.0f, -3.0f, 1.0f, 1.0f};
  for (Precision p :
       {Precision::kDefault, Precision::kHigh, Precision::kHighest, Precision::kF32}) {
    const std::vector<float> c = RunMatmul(a, b, 2, 2, 2, p, GetParam());
    EXPECT_EQ(c[0], kInf) << PrecisionName(p);
    EXPECT_EQ(c[1], -kInf) << PrecisionName(p);
    EXPECT_EQ(c[2], 3.0f) << PrecisionName(p);
    EXPECT_EQ(c[3], 0.5f) << PrecisionName(p);
  }
}

TEST_P(GemmBackendTest, NanAndInfTimesZeroGiveNan) {
  const std::vector<float> a = {std::nanf(""), 1.0f, kInf, 1.0f, 1.0f, 2.0f};  // 3x2
  const std::vector<float> b = {0.0f, 1.0f, 1.0f, 1.0f};                       // 2x2
  for (Precision p :
       {Precision::kDefault, Precision::kHigh, Precision::kHighest, Precision::kF32}) {
    const std::vector<float> c = RunMatmul(a, b, 3, 2, 2, p, GetParam());
    EXPECT_TRUE(std::isnan(c[0]) && std::isnan(c[1])) << PrecisionName(p) << ": NaN row";
    EXPECT_TRUE(std::isnan(c[2])) << PrecisionName(p) << ": inf·0";
    EXPECT_EQ(c[3], kInf) << PrecisionName(p);
    EXPECT_EQ(c[4], 2.0f) << PrecisionName(p);  // finite rows are untouched by NaN elsewhere
    EXPECT_EQ(c[5], 3.0f) << PrecisionName(p);
  }
}

TEST_P(GemmBackendTest, BfloatOverflowOnlyHitsDefault) {
  // FLT_MAX rounds to inf in bf16 (DEFAULT); the splits keep it finite (hi = trunc).
  const std::vector<float> a = {std::numeric_limits<float>::max()}, b = {0.5f};
  EXPECT_EQ(RunMatmul(a, b, 1, 1, 1, Precision::kDefault, GetParam())[0], kInf);
  for (Precision p : {Precision::kHighest, Precision::kF32}) {
    EXPECT_FLOAT_EQ(RunMatmul(a, b, 1, 1, 1, p, GetParam())[0],
                    std::numeric_limits<float>::max() / 2)
        << PrecisionName(p);
  }
  EXPECT_TRUE(std::isfinite(RunMatmul(a, b, 1, 1, 1, Precision::kHigh, GetParam())[0]));
}

TEST_P(GemmBackendTest, ConcurrentCallsAgreeWithSerialOnes) {
  const int64_t m = 24, n = 40, k = 96;
  const std::vector<float> a = RandomMatrix(m, k, 8), b = RandomMatrix(k, n, 9);
  const std::vector<float> serial = RunMatmul(a, b, m, n, k, Precision::kHighest, GetParam());
  std::vector<std::vector<float>> results(4);
  std::vector<std::thread> threads;
  for (auto& result : results) {
    threads.emplace_back([&, out = &result] {
      for (int rep = 0; rep < 5; ++rep) {
        *out = RunMatmul(a, b, m, n, k, Precision::kHighest, GetParam());
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (const auto& result : results) EXPECT_EQ(result, serial);
}

// Transposed, batched and shared operands through RunGemm on a two-thread pool, on every backend:
// each item matches the double reference of its dense form within the precision's bound.
double BoundFor(Precision p) {
  switch (p) {
    case Precision::kDefault:
      return kDefaultBound;
    case Precision::kHigh:
      return kHighBound;
    default:
      return kHighestBound;
  }
}

TEST_P(GemmBackendTest, RunGemmHandlesBatchesTransposesAndSharedOperandsOnAPool) {
  Pool pool(1);
  ParallelContext ctx;
  ctx.pool = &pool;
  struct Case {
    int64_t batch, m, n, k;
  };
  // One tile of every item; then 2.5 M MACs, two tiles of four items each (on the bf16
  // primitives each tile rounds its own items).
  for (Case s : {Case{3, 37, 45, 70}, Case{8, 64, 48, 100}}) {
    const int64_t batch = s.batch, m = s.m, n = s.n, k = s.k;
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        for (bool shared_b : {false, true}) {
          std::vector<std::vector<float>> as, bs;
          std::vector<float> a_store, b_store;
          for (int64_t i = 0; i < batch; ++i) {
            as.push_back(RandomMatrix(m, k, 100 + static_cast<unsigned>(i)));
            bs.push_back(RandomMatrix(k, n, shared_b ? 200 : 200 + static_cast<unsigned>(i)));
            const std::vector<float> sa = ta ? Transposed(as.back(), m, k) : as.back();
            const std::vector<float> sb = tb ? Transposed(bs.back(), k, n) : bs.back();
            a_store.insert(a_store.end(), sa.begin(), sa.end());
            if (!shared_b || i == 0) b_store.insert(b_store.end(), sb.begin(), sb.end());
          }
          for (Precision p : {Precision::kDefault, Precision::kHigh, Precision::kHighest}) {
            std::vector<float> c(static_cast<size_t>(batch * m * n), std::nanf(""));
            GemmProblem problem;
            problem.batch = batch, problem.m = m, problem.n = n, problem.k = k;
            problem.a = {a_store.data(), ta, false, false};
            problem.b = {b_store.data(), tb, shared_b, false};
            problem.c = c.data();
            ASSERT_TRUE(RunGemm(problem, p, ctx, GetParam()));
            for (int64_t i = 0; i < batch; ++i) {
              const Reference ref = DoubleMatmul(as[i], bs[i], m, n, k);
              const std::vector<float> item(c.begin() + i * m * n, c.begin() + (i + 1) * m * n);
              EXPECT_LT(MaxScaledError(item, ref), BoundFor(p))
                  << batch << " items: ta=" << ta << " tb=" << tb << " shared_b=" << shared_b
                  << " item " << i << " " << PrecisionName(p);
            }
          }
        }
      }
    }
  }
}

TEST_P(GemmBackendTest, LongContractionsAreCutIntoChunksWithoutChangingTheResult) {
  const int64_t m = 9, n = 11, k = 20000;  // k > the 8192 chunk
  const std::vector<float> a = RandomMatrix(m, k, 31), b = RandomMatrix(k, n, 32);
  const Reference ref = DoubleMatmul(a, b, m, n, k);
  for (Precision p : {Precision::kDefault, Precision::kHigh, Precision::kHighest}) {
    EXPECT_LT(MaxScaledError(RunMatmul(a, b, m, n, k, p, GetParam()), ref), BoundFor(p))
        << PrecisionName(p);
  }
}

TEST_P(GemmBackendTest, TiledOnTwoThreadsAgreesWithOneThread) {
  const int64_t m = 1100, n = 1030, k = 600;  // above one tile's budget: tiled
  const std::vector<float> a = RandomMatrix(m, k, 41), b = RandomMatrix(k, n, 42);
  const std::vector<float> serial = RunMatmul(a, b, m, n, k, Precision::kDefault, GetParam());
  Pool pool(1);
  ParallelContext ctx;
  ctx.pool = &pool;
  std::vector<float> c(static_cast<size_t>(m * n), std::nanf(""));
  GemmProblem problem;
  problem.m = m, problem.n = n, problem.k = k;
  problem.a.data = a.data();
  problem.b.data = b.data();
  problem.c = c.data();
  ASSERT_TRUE(RunGemm(problem, Precision::kDefault, ctx, GetParam()));
  double worst = 0;
  for (size_t i = 0; i < c.size(); ++i) {
    worst = std::max(worst, static_cast<double>(std::abs(c[i] - serial[i])));
  }
  // Same exact products, possibly summed in another order: f32 re-association only.
  EXPECT_LE(worst, 4 * kF32Eps * std::sqrt(static_cast<double>(k)) * k);
}

// On the bf16 primitives each tile of one item rounds its own block: A's rows in row tiles (a
// tall product), B's columns in column tiles (a wide one), from plain or transposed storage. On
// two threads each product is two tiles; every combination computes the product.
TEST_P(GemmBackendTest, TilesOfOneItemOnAPoolSplitRowsOrColumnsOfEitherLayout) {
  struct Case {
    int64_t m, n, k;
  };
  Pool pool(1);
  ParallelContext ctx;
  ctx.pool = &pool;
  for (Case s : {Case{300, 90, 120}, Case{90, 300, 120}}) {  // 3.2 M MACs: shared by two threads
    const std::vector<float> a = RandomMatrix(s.m, s.k, 81), b = RandomMatrix(s.k, s.n, 82);
    const std::vector<float> at = Transposed(a, s.m, s.k), bt = Transposed(b, s.k, s.n);
    const Reference ref = DoubleMatmul(a, b, s.m, s.n, s.k);
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        for (Precision p : {Precision::kDefault, Precision::kHigh, Precision::kHighest}) {
          std::vector<float> c(static_cast<size_t>(s.m * s.n), std::nanf(""));
          GemmProblem problem;
          problem.m = s.m, problem.n = s.n, problem.k = s.k;
          problem.a = {ta ? at.data() : a.data(), ta, false, false};
          problem.b = {tb ? bt.data() : b.data(), tb, false, false};
          problem.c = c.data();
          ASSERT_TRUE(RunGemm(problem, p, ctx, GetParam()));
          EXPECT_LT(MaxScaledError(c, ref), BoundFor(p))
              << s.m << "x" << s.n << " ta=" << ta << " tb=" << tb << " " << PrecisionName(p);
        }
      }
    }
  }
}

TEST_P(GemmBackendTest, StoppedTokenStopsTheGemm) {
  const std::vector<float> a = RandomMatrix(64, 64, 1), b = RandomMatrix(64, 64, 2);
  std::vector<float> c(64 * 64);
  std::atomic<bool> cancel{true};
  ParallelContext ctx;
  ctx.cancel.flag = &cancel;
  GemmProblem problem;
  problem.m = problem.n = problem.k = 64;
  problem.a.data = a.data();
  problem.b.data = b.data();
  problem.c = c.data();
  EXPECT_FALSE(RunGemm(problem, Precision::kHighest, ctx, GetParam()));
  cancel = false;
  EXPECT_TRUE(RunGemm(problem, Precision::kHighest, ctx, GetParam()));
}

// Each Eigen ISA variant this CPU can run is a plain f32 GEMM, transposed operands included.
TEST(GemmIsaTest, EveryEigenVariantTheCpuSupportsComputesTheProduct) {
  const int64_t m = 67, n = 45, k = 130;
  const std::vector<float> a = RandomMatrix(m, k, 51), b = RandomMatrix(k, n, 52);
  const Reference ref = DoubleMatmul(a, b, m, n, k);
  const std::vector<float> at = Transposed(a, m, k), bt = Transposed(b, k, n);
  int variants = 0;
  for (Isa isa : {Isa::kBaseline, Isa::kAvx2, Isa::kAvx512}) {
    if (!IsaSupported(isa)) continue;
    ++variants;
    for (bool transposed : {false, true}) {
      std::vector<float> c(static_cast<size_t>(m * n), std::nanf(""));
      PassArgs args;
      args.a = {transposed ? at.data() : a.data(), transposed ? m : k, transposed, 0};
      args.b = {transposed ? bt.data() : b.data(), transposed ? k : n, transposed, 0};
      args.c = c.data();
      args.ldc = n;
      args.m = m, args.n = n, args.k = k;
      eigen_gemm::Pass(args, isa);
      EXPECT_LT(MaxScaledError(c, ref), 16 * kF32Eps) << IsaName(isa) << " " << transposed;
    }
  }
  EXPECT_GE(variants, 1);
  EXPECT_TRUE(IsaSupported(HostIsa()));
}

INSTANTIATE_TEST_SUITE_P(Backends, GemmBackendTest,
                         ::testing::Values(GemmBackend::kEigen, GemmBackend::kOneDnn,
                                           GemmBackend::kOneDnnF32),
                         [](const auto& info) { return std::string(GemmBackendName(info.param)); });

// The oneDNN backends this machine can run (the bf16 one needs AVX512-BF16 or AMX).
std::vector<GemmBackend> OneDnnBackends() {
  std::vector<GemmBackend> backends;
  if (OneDnnAvailable()) backends.push_back(GemmBackend::kOneDnn);
  if (OneDnnF32Available()) backends.push_back(GemmBackend::kOneDnnF32);
  return backends;
}

// Eigen and oneDNN sum the same exact bf16 products in different orders: they may differ only
// by f32 re-association, a few units of 2^-24·Σ|a||b|.
TEST(GemmCrossBackendTest, EigenAndOneDnnAgreeForEveryPrecision) {
  if (OneDnnBackends().empty()) GTEST_SKIP() << "oneDNN not available here";
  struct Shape {
    int64_t m, n, k;
  };
  for (GemmBackend backend : OneDnnBackends()) {
    for (Shape s : {Shape{1, 1, 1}, Shape{3, 5, 7}, Shape{1, 64, 33}, Shape{17, 1, 130},
                    Shape{64, 48, 256}, Shape{128, 96, 512}}) {
      const std::vector<float> a = RandomMatrix(s.m, s.k, 21), b = RandomMatrix(s.k, s.n, 22);
      const Reference ref = DoubleMatmul(a, b, s.m, s.n, s.k);
      for (Precision p :
           {Precision::kDefault, Precision::kHigh, Precision::kHighest, Precision::kF32}) {
        const std::vector<float> e = RunMatmul(a, b, s.m, s.n, s.k, p, GemmBackend::kEigen);
        const std::vector<float> o = RunMatmul(a, b, s.m, s.n, s.k, p, backend);
        double worst = 0;
        for (std::size_t i = 0; i < e.size(); ++i) {
          worst = std::max(worst, std::abs(static_cast<double>(e[i]) - o[i]) / ref.abs_scale[i]);
        }
        EXPECT_LE(worst, 4 * kF32Eps * std::sqrt(static_cast<double>(s.k)))
            << GemmBackendName(backend) << " " << PrecisionName(p) << " " << s.m << "x" << s.n
            << "x" << s.k;
      }
    }
  }
}

TEST(GemmCrossBackendTest, RepeatedShapesReuseCachedPrimitives) {
  if (OneDnnBackends().empty()) GTEST_SKIP() << "oneDNN not available here";
  const GemmBackend backend = OneDnnBackends().front();
  const std::vector<float> a = RandomMatrix(7, 13, 1), b = RandomMatrix(13, 11, 2);
  RunMatmul(a, b, 7, 11, 13, Precision::kHighest, backend);
  const std::size_t after_first = onednn::CachedPrimitives();
  EXPECT_GE(after_first, 2u);  // the overwrite pass and the accumulate pass
  RunMatmul(a, b, 7, 11, 13, Precision::kHighest, backend);
  RunMatmul(a, b, 7, 11, 13, Precision::kDefault, backend);
  EXPECT_EQ(onednn::CachedPrimitives(), after_first);
}

// Tiles are strided views of the operands: oneDNN's f32 GEMM must take them itself (a failure
// would silently fall back to Eigen).
TEST(GemmCrossBackendTest, OneDnnF32PassTakesStridedTransposedTiles) {
  if (!OneDnnF32Available()) GTEST_SKIP() << "oneDNN not compiled in";
  const int64_t m = 40, n = 30, k = 50;
  const std::vector<float> a = RandomMatrix(m, k, 71), b = RandomMatrix(k, n, 72);
  const std::vector<float> at = Transposed(a, m, k);
  // The lower-right 20 x 10 block of C from rows 20.. of A and columns 20.. of B, k = 50.
  std::vector<float> c(static_cast<size_t>(m * n), 0.0f);
  PassArgs args;
  args.a = {at.data() + 20, m, /*transposed=*/true, 0};
  args.b = {b.data() + 20, n, false, 0};
  args.c = c.data() + 20 * n + 20;
  args.ldc = n;
  args.m = 20, args.n = 10, args.k = k;
  ASSERT_TRUE(onednn::Pass(args, /*bf16=*/false));
  const Reference ref = DoubleMatmul(a, b, m, n, k);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      const double want = i >= 20 && j >= 20 ? ref.value[i * n + j] : 0.0;
      EXPECT_NEAR(c[i * n + j], want, 1e-5) << i << "," << j;
    }
  }
}

TEST(GemmBackendResolutionTest, EigenIsAlwaysHonouredAndOneDnnNeedsTheCpu) {
  EXPECT_EQ(ResolveBackend(GemmBackend::kEigen), GemmBackend::kEigen);
  const GemmBackend f32 = OneDnnF32Available() ? GemmBackend::kOneDnnF32 : GemmBackend::kEigen;
  const GemmBackend best = OneDnnAvailable() ? GemmBackend::kOneDnn : f32;
  EXPECT_EQ(ResolveBackend(GemmBackend::kOneDnn), best);
  EXPECT_EQ(ResolveBackend(GemmBackend::kOneDnnF32), f32);
  EXPECT_NE(ResolveBackend(GemmBackend::kAuto), GemmBackend::kAuto);
  // The startup log line names what kAuto runs on.
  EXPECT_EQ(GemmKernelName().rfind(GemmBackendName(ResolveBackend(GemmBackend::kAuto)), 0), 0u)
      << GemmKernelName();
#ifndef TPUEMU_HAVE_ONEDNN
  EXPECT_FALSE(OneDnnAvailable());
  EXPECT_FALSE(OneDnnF32Available());
#else
  EXPECT_TRUE(OneDnnF32Available());  // oneDNN's f32 GEMM runs on every x86-64
#endif
}

}  // namespace
}  // namespace tpuemu::engine
