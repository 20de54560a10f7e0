#include "tests/engine/reference/executor.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "engine/frontend/compile_cache.h"
#include "tests/support/wait_for.h"

namespace tpuemu::engine::reference {
namespace {

using ::testing::HasSubstr;

Slice V4() { return *Slice::FromAcceleratorType("v4-8"); }

Tensor Random(Shape shape, uint32_t seed, DType dtype = DType::kF32) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(shape.NumElements()));
  for (auto& x : v) x = dist(rng);
  return *Tensor::FromF32(std::move(shape), std::move(v), dtype);
}

// Compiles and runs graph, failing the test on error.
ExecutionResult RunGraph(const Graph& graph, const std::map<std::string, Tensor>& feeds,
                         Precision precision = Precision::kF32, Pool* pool = nullptr) {
  EXPECT_TRUE(graph.status().ok()) << graph.status().ToString();
  CompileOptions options;
  options.precision = precision;
  auto program = Compile(graph, V4(), options);
  EXPECT_TRUE(program.ok()) << program.status().ToString();
  ExecuteOptions exec;
  exec.pool = pool;
  auto result = Execute(**program, graph, feeds, exec);
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  return std::move(result).value();
}

void ExpectNear(const Tensor& t, const std::vector<double>& want, double tol) {
  ASSERT_EQ(t.num_elements(), static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_NEAR(t.f32()[i], want[i], tol * (1 + std::abs(want[i]))) << "at " << i;
  }
}

// Naive [m,k]·[k,n] in double, with optional transposed storage.
std::vector<double> NaiveDot(const float* a, const float* b, int64_t m, int64_t n, int64_t k,
                             bool ta, bool tb) {
  std::vector<double> c(static_cast<size_t>(m * n), 0.0);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p) {
        s += static_cast<double>(ta ? a[p * m + i] : a[i * k + p]) *
             (tb ? b[j * k + p] : b[p * n + j]);
      }
      c[static_cast<size_t>(i * n + j)] = s;
    }
  }
  return c;
}

TEST(ExecutorTest, JaxIssue9973GoldenVectorsAtEachPrecision) {
  Graph g;
  g.Parameter("x", {2, 2});
  g.Parameter("y", {2, 2});
  g.Dot("z", "x", "y");
  g.MarkOutput("z");
  std::map<std::string, Tensor> feeds;
  feeds["x"] = *Tensor::FromF32({2, 2}, {0.3744f, 0.1656f, 0.4707f, 0.1663f});
  feeds["y"] = *Tensor::FromF32({2, 2}, {0.3946f, 0.1186f, 0.1569f, 0.3145f});
  const auto def = RunGraph(g, feeds, Precision::kDefault).outputs.at("z");
  const float want_default[] = {0.17405128f, 0.09669876f, 0.21180916f, 0.10805416f};
  for (int i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(def.f32()[i], want_default[i]);
  const auto hi = RunGraph(g, feeds, Precision::kHighest).outputs.at("z");
  const float want_highest[] = {0.17372088f, 0.09648504f, 0.21183069f, 0.10812636f};
  for (int i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(hi.f32()[i], want_highest[i]);
}

TEST(ExecutorTest, DotFormsMatchNaiveReference) {
  Graph g;
  g.Parameter("a", {3, 5, 7});
  g.Parameter("b", {3, 7, 4});
  g.Parameter("w", {7, 4});
  g.Parameter("wt", {4, 7});
  g.Parameter("at", {7, 5});
  g.Dot("bb", "a", "b");
  g.Dot("bw", "a", "w");
  g.Dot("bwt", "a", "wt", false, true);
  g.Dot("tl", "at", "w", true, false);
  g.Dot("tt", "at", "wt", true, true);
  for (auto id : {"bb", "bw", "bwt", "tl", "tt"}) g.MarkOutput(id);
  std::map<std::string, Tensor> f;
  f["a"] = Random({3, 5, 7}, 1);
  f["b"] = Random({3, 7, 4}, 2);
  f["w"] = Random({7, 4}, 3);
  f["wt"] = Random({4, 7}, 4);
  f["at"] = Random({7, 5}, 5);
  const auto r = RunGraph(g, f);
  std::vector<double> bb, bw, bwt;
  for (int64_t i = 0; i < 3; ++i) {
    const float* ai = f["a"].f32() + i * 35;
    auto x = NaiveDot(ai, f["b"].f32() + i * 28, 5, 4, 7, false, false);
    auto y = NaiveDot(ai, f["w"].f32(), 5, 4, 7, false, false);
    auto z = NaiveDot(ai, f["wt"].f32(), 5, 4, 7, false, true);
    bb.insert(bb.end(), x.begin(), x.end());
    bw.insert(bw.end(), y.begin(), y.end());
    bwt.insert(bwt.end(), z.begin(), z.end());
  }
  ExpectNear(r.outputs.at("bb"), bb, 1e-5);
  ExpectNear(r.outputs.at("bw"), bw, 1e-5);
  ExpectNear(r.outputs.at("bwt"), bwt, 1e-5);
  ExpectNear(r.outputs.at("tl"), NaiveDot(f["at"].f32(), f["w"].f32(), 5, 4, 7, true, false), 1e-5);
  ExpectNear(r.outputs.at("tt"), NaiveDot(f["at"].f32(), f["wt"].f32(), 5, 4, 7, true, true), 1e-5);
}

TEST(ExecutorTest, PoolShardedDotEqualsSerialDot) {
  Graph g;
  g.Parameter("a", {256, 128});
  g.Parameter("b", {128, 192});
  g.Parameter("c", {4, 128, 192});
  g.Dot("d", "a", "b");
  g.Dot("e", "a", "c");
  g.MarkOutput("d");
  g.MarkOutput("e");
  std::map<std::string, Tensor> f{
      {"a", Random({256, 128}, 7)}, {"b", Random({128, 192}, 8)}, {"c", Random({4, 128, 192}, 9)}};
  Pool pool(2);
  const auto serial = RunGraph(g, f, Precision::kDefault);
  const auto sharded = RunGraph(g, f, Precision::kDefault, &pool);
  for (auto id : {"d", "e"}) {
    const Tensor& s = serial.outputs.at(id);
    const Tensor& p = sharded.outputs.at(id);
    ASSERT_EQ(s.shape(), p.shape());
    for (int64_t i = 0; i < s.num_elements(); ++i) {
      ASSERT_NEAR(s.f32()[i], p.f32()[i], 1e-4 * (1 + std::abs(s.f32()[i])));
    }
  }
  // The caller runs shards too and may finish them all before a worker wakes; the helper tasks it
  // submitted still complete (finding nothing left), so wait for them rather than race them.
  EXPECT_TRUE(tpuemu::testing::WaitFor([&] { return pool.GetStats().completed_tasks > 0; }));
}

struct ConvCase {
  Shape x, f;
  Conv2DParams p;
};

// Direct-loop conv2d in double, NHWC / HWIO.
std::vector<double> NaiveConv(const Tensor& x, const Tensor& f, const Conv2DParams& p,
                              const Shape& out) {
  const auto& xs = x.shape();
  const auto& fs = f.shape();
  const ConvDim dh =
      ConvOutputDim(xs.dim(1), fs.dim(0), p.stride_h, p.padding, p.pads[0], p.pads[1]);
  const ConvDim dw =
      ConvOutputDim(xs.dim(2), fs.dim(1), p.stride_w, p.padding, p.pads[2], p.pads[3]);
  std::vector<double> y(static_cast<size_t>(out.NumElements()), 0.0);
  for (int64_t b = 0; b < out.dim(0); ++b)
    for (int64_t oy = 0; oy < out.dim(1); ++oy)
      for (int64_t ox = 0; ox < out.dim(2); ++ox)
        for (int64_t co = 0; co < out.dim(3); ++co) {
          double s = 0;
          for (int64_t ky = 0; ky < fs.dim(0); ++ky)
            for (int64_t kx = 0; kx < fs.dim(1); ++kx)
              for (int64_t ci = 0; ci < fs.dim(2); ++ci) {
                const int64_t iy = oy * p.stride_h - dh.pad_before + ky;
                const int64_t ix = ox * p.stride_w - dw.pad_before + kx;
                if (iy < 0 || ix < 0 || iy >= xs.dim(1) || ix >= xs.dim(2)) continue;
                s += static_cast<double>(
                         x.f32()[((b * xs.dim(1) + iy) * xs.dim(2) + ix) * xs.dim(3) + ci]) *
                     f.f32()[((ky * fs.dim(1) + kx) * fs.dim(2) + ci) * fs.dim(3) + co];
              }
          y[static_cast<size_t>(((b * out.dim(1) + oy) * out.dim(2) + ox) * out.dim(3) + co)] = s;
        }
  return y;
}

std::vector<ConvCase> ConvCases() {
  return {
      {{2, 7, 6, 3}, {3, 3, 3, 4}, {1, 1, ConvPadding::kValid, {}}},
      {{2, 7, 6, 3}, {3, 2, 3, 4}, {2, 2, ConvPadding::kSame, {}}},
      {{1, 5, 5, 2}, {2, 3, 2, 3}, {2, 1, ConvPadding::kExplicit, {1, 0, 2, 1}}},
      {{2, 4, 4, 5}, {1, 1, 5, 3}, {1, 1, ConvPadding::kValid, {}}},  // pointwise path
  };
}

TEST(ExecutorTest, Conv2DMatchesDirectLoops) {
  for (const auto& c : ConvCases()) {
    Graph g;
    g.Parameter("x", c.x);
    g.Parameter("f", c.f);
    g.Conv2D("y", "x", "f", c.p);
    g.MarkOutput("y");
    std::map<std::string, Tensor> feeds{{"x", Random(c.x, 11)}, {"f", Random(c.f, 12)}};
    const auto r = RunGraph(g, feeds);
    const Tensor& y = r.outputs.at("y");
    ExpectNear(y, NaiveConv(feeds["x"], feeds["f"], c.p, y.shape()), 1e-5);
  }
}

// L(x, f) = Σ conv(x, f) ⊙ dy; the backprops must equal its finite-difference gradients.
TEST(ExecutorTest, ConvBackpropsMatchFiniteDifferences) {
  for (const auto& c : ConvCases()) {
    Graph g;
    g.Parameter("x", c.x);
    g.Parameter("f", c.f);
    auto y = g.Conv2D("y", "x", "f", c.p);
    const Shape ys = g.Find(y)->shape;
    g.Parameter("dy", ys);
    g.Conv2DBackpropInput("dx", c.x, "f", "dy", c.p);
    g.Conv2DBackpropFilter("df", "x", c.f, "dy", c.p);
    g.MarkOutput("dx");
    g.MarkOutput("df");
    std::map<std::string, Tensor> feeds{
        {"x", Random(c.x, 21)}, {"f", Random(c.f, 22)}, {"dy", Random(ys, 23)}};
    const auto r = RunGraph(g, feeds);
    auto loss = [&](const Tensor& x, const Tensor& f) {
      const auto out = NaiveConv(x, f, c.p, ys);
      double s = 0;
      for (size_t i = 0; i < out.size(); ++i) s += out[i] * feeds["dy"].f32()[i];
      return s;
    };
    for (const char* wrt : {"x", "f"}) {
      Tensor t = feeds[wrt];
      const Tensor& grad = r.outputs.at(wrt[0] == 'x' ? "dx" : "df");
      for (int64_t i = 0; i < t.num_elements(); ++i) {
        const float orig = t.f32()[i];
        const float h = 0.5f;  // L is linear in each argument: any step is exact up to rounding
        t.f32()[i] = orig + h;
        const double up = wrt[0] == 'x' ? loss(t, feeds["f"]) : loss(feeds["x"], t);
        t.f32()[i] = orig - h;
        const double down = wrt[0] == 'x' ? loss(t, feeds["f"]) : loss(feeds["x"], t);
        t.f32()[i] = orig;
        ASSERT_NEAR(grad.f32()[i], (up - down) / (2 * h), 1e-4) << wrt << " element " << i;
      }
    }
  }
}

TEST(ExecutorTest, ActivationGradsMatchFiniteDifferences) {
  Graph g;
  g.Parameter("x", {64});
  g.Parameter("dy", {64});
  g.ReluGrad("rg", "x", "dy");
  g.GeluGrad("gg", "x", "dy");
  g.Gelu("gelu", "x");
  g.MarkOutput("rg");
  g.MarkOutput("gg");
  g.MarkOutput("gelu");
  std::map<std::string, Tensor> f{{"x", Random({64}, 31)}, {"dy", Random({64}, 32)}};
  const auto r = RunGraph(g, f);
  auto gelu = [](double x) {
    return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
  };
  const double h = 1e-4;
  for (int i = 0; i < 64; ++i) {
    const double x = f["x"].f32()[i], dy = f["dy"].f32()[i];
    EXPECT_NEAR(r.outputs.at("gelu").f32()[i], gelu(x), 1e-6);
    EXPECT_NEAR(r.outputs.at("gg").f32()[i], dy * (gelu(x + h) - gelu(x - h)) / (2 * h), 1e-4);
    const double relu_fd = ((x + h > 0 ? x + h : 0) - (x - h > 0 ? x - h : 0)) / (2 * h);
    EXPECT_NEAR(r.outputs.at("rg").f32()[i], dy * relu_fd, 1e-5);
  }
}

TEST(ExecutorTest, SoftmaxAndCrossEntropyMatchFormulaAndGradient) {
  const int64_t b = 4, c = 6;
  Graph g;
  g.Parameter("logits", {b, c});
  g.Parameter("labels", {b}, DType::kI32);
  g.Softmax("sm", "logits");
  g.SoftmaxCrossEntropy("loss", "logits", "labels");
  g.SoftmaxCrossEntropyGrad("dlogits", "logits", "labels");
  for (auto id : {"sm", "loss", "dlogits"}) g.MarkOutput(id);
  std::map<std::string, Tensor> f{{"logits", Random({b, c}, 41)},
                                  {"labels", *Tensor::FromI32({b}, {0, 5, 2, 2})}};
  const auto r = RunGraph(g, f);
  auto loss = [&](const std::vector<double>& z) {
    double total = 0;
    for (int64_t i = 0; i < b; ++i) {
      double s = 0;
      for (int64_t j = 0; j < c; ++j) s += std::exp(z[static_cast<size_t>(i * c + j)]);
      total += std::log(s) - z[static_cast<size_t>(i * c + f["labels"].i32()[i])];
    }
    return total / b;
  };
  std::vector<double> z(f["logits"].f32(), f["logits"].f32() + b * c);
  EXPECT_NEAR(r.outputs.at("loss").f32()[0], loss(z), 1e-5);
  for (int64_t i = 0; i < b; ++i) {
    double s = 0;
    for (int64_t j = 0; j < c; ++j) s += std::exp(z[static_cast<size_t>(i * c + j)]);
    for (int64_t j = 0; j < c; ++j) {
      EXPECT_NEAR(r.outputs.at("sm").f32()[i * c + j],
                  std::exp(z[static_cast<size_t>(i * c + j)]) / s, 1e-6);
    }
  }
  for (size_t k = 0; k < z.size(); ++k) {
    auto zp = z, zm = z;
    zp[k] += 1e-5;
    zm[k] -= 1e-5;
    EXPECT_NEAR(r.outputs.at("dlogits").f32()[k], (loss(zp) - loss(zm)) / 2e-5, 1e-5);
  }
  f["labels"] = *Tensor::FromI32({b}, {0, 6, 2, 2});
  auto program = Compile(g, V4(), {});
  ASSERT_TRUE(program.ok());
  auto bad = Execute(**program, g, f);
  EXPECT_THAT(bad.status().message(), HasSubstr("label 6 at row 1 is out of range [0, 6)"));
}

TEST(ExecutorTest, VectorAndDataMovementOps) {
  Graph g;
  g.Constant("x", {2, 3}, Init::Values({1, -2, 3, 4, 5, -6}));
  g.Constant("v", {3}, Init::Values({10, 20, 30}));
  g.Add("add", "x", "v");
  g.Sub("sub", "v", "x");
  g.Max("max", "x", "v");
  g.Div("div", "x", "v");
  g.Reduce("sum0", "x", ReduceKind::kSum, {0});
  g.Reduce("max1", "x", ReduceKind::kMax, {1}, true);
  g.Reduce("mean", "x", ReduceKind::kMean);
  g.Broadcast("bcol", "v", {3, 2}, std::vector<int64_t>{0});
  g.Transpose("t", "x", {1, 0});
  g.Concat("cat", {"x", "x"}, 1);
  g.Slice("sl", "x", {0, 1}, {2, 3});
  g.Reshape("rs", "x", {3, 2});
  g.Exp("exp", "v");
  g.Rsqrt("rsqrt", "v");
  for (auto id : {"add", "sub", "max", "div", "sum0", "max1", "mean", "bcol", "t", "cat", "sl",
                  "rs", "exp", "rsqrt"}) {
    g.MarkOutput(id);
  }
  const auto r = RunGraph(g, {});
  ExpectNear(r.outputs.at("add"), {11, 18, 33, 14, 25, 24}, 1e-7);
  ExpectNear(r.outputs.at("sub"), {9, 22, 27, 6, 15, 36}, 1e-7);
  ExpectNear(r.outputs.at("max"), {10, 20, 30, 10, 20, 30}, 1e-7);
  ExpectNear(r.outputs.at("div"), {0.1, -0.1, 0.1, 0.4, 0.25, -0.2}, 1e-6);
  ExpectNear(r.outputs.at("sum0"), {5, 3, -3}, 1e-7);
  ExpectNear(r.outputs.at("max1"), {3, 5}, 1e-7);
  EXPECT_EQ(r.outputs.at("max1").shape(), (Shape{2, 1}));
  ExpectNear(r.outputs.at("mean"), {5.0 / 6}, 1e-6);
  ExpectNear(r.outputs.at("bcol"), {10, 10, 20, 20, 30, 30}, 1e-7);
  ExpectNear(r.outputs.at("t"), {1, 4, -2, 5, 3, -6}, 1e-7);
  ExpectNear(r.outputs.at("cat"), {1, -2, 3, 1, -2, 3, 4, 5, -6, 4, 5, -6}, 1e-7);
  ExpectNear(r.outputs.at("sl"), {-2, 3, 5, -6}, 1e-7);
  ExpectNear(r.outputs.at("rs"), {1, -2, 3, 4, 5, -6}, 1e-7);
  EXPECT_EQ(r.outputs.at("rs").shape(), (Shape{3, 2}));
  ExpectNear(r.outputs.at("exp"), {std::exp(10.0), std::exp(20.0), std::exp(30.0)}, 1e-6);
  ExpectNear(r.outputs.at("rsqrt"), {1 / std::sqrt(10.0), 1 / std::sqrt(20.0), 1 / std::sqrt(30.0)},
             1e-6);
}

// Big enough that the vector kernels split into chunks and run on the pool: every broadcast and
// reduction path against naive loops in double, with and without a pool.
TEST(ExecutorTest, ChunkedVectorKernelsMatchNaiveLoops) {
  const int64_t a = 40, b = 300, c = 70;  // 840 K elements: many chunks
  const Tensor x = Random({a, b, c}, 11);
  const Tensor col = Random({b, 1}, 12);
  const Tensor row = Random({c}, 13);
  Graph g;
  g.Parameter("x", {a, b, c});
  g.Parameter("col", {b, 1});
  g.Parameter("row", {c});
  g.Mul("x_col", "x", "col");  // broadcast along the last dim
  g.Sub("row_x", "row", "x");  // broadcast over the leading dims
  g.Reduce("sum_last", "x", ReduceKind::kSum, {2});
  g.Reduce("mean_first", "x", ReduceKind::kMean, {0});
  g.Reduce("sum_outer", "x", ReduceKind::kSum, {0, 2});  // not one block
  g.Reduce("max_mid", "x", ReduceKind::kMax, {1});
  g.Transpose("perm", "x", {1, 0, 2});  // last dim kept: copied in runs
  g.Transpose("swap", "x", {0, 2, 1});
  for (auto id :
       {"x_col", "row_x", "sum_last", "mean_first", "sum_outer", "max_mid", "perm", "swap"}) {
    g.MarkOutput(id);
  }
  const float* px = x.f32();
  auto at = [&](int64_t i, int64_t j, int64_t k) { return double{px[(i * b + j) * c + k]}; };
  std::vector<double> x_col, row_x, sum_last(a * b), mean_first(b * c), sum_outer(b), max_mid, perm,
      swap;
  for (int64_t i = 0; i < a; ++i) {
    for (int64_t j = 0; j < b; ++j) {
      for (int64_t k = 0; k < c; ++k) {
        x_col.push_back(at(i, j, k) * col.f32()[j]);
        row_x.push_back(row.f32()[k] - at(i, j, k));
        sum_last[i * b + j] += at(i, j, k);
        mean_first[j * c + k] += at(i, j, k) / a;
        sum_outer[j] += at(i, j, k);
      }
    }
  }
  for (int64_t i = 0; i < a; ++i) {
    for (int64_t k = 0; k < c; ++k) {
      double m = -INFINITY;
      for (int64_t j = 0; j < b; ++j) m = std::max(m, at(i, j, k));
      max_mid.push_back(m);
    }
  }
  for (int64_t j = 0; j < b; ++j) {
    for (int64_t i = 0; i < a; ++i) {
      for (int64_t k = 0; k < c; ++k) perm.push_back(at(i, j, k));
    }
  }
  for (int64_t i = 0; i < a; ++i) {
    for (int64_t k = 0; k < c; ++k) {
      for (int64_t j = 0; j < b; ++j) swap.push_back(at(i, j, k));
    }
  }
  Pool pool(2);
  for (Pool* p : {static_cast<Pool*>(nullptr), &pool}) {
    const auto r = RunGraph(g, {{"x", x}, {"col", col}, {"row", row}}, Precision::kF32, p);
    ExpectNear(r.outputs.at("x_col"), x_col, 1e-7);
    ExpectNear(r.outputs.at("row_x"), row_x, 1e-7);
    ExpectNear(r.outputs.at("sum_last"), sum_last, 1e-6);
    ExpectNear(r.outputs.at("mean_first"), mean_first, 1e-6);
    ExpectNear(r.outputs.at("sum_outer"), sum_outer, 1e-6);
    ExpectNear(r.outputs.at("max_mid"), max_mid, 0);
    ExpectNear(r.outputs.at("perm"), perm, 0);
    ExpectNear(r.outputs.at("swap"), swap, 0);
  }
}

// Elementwise ops write into the buffer of an input that dies at them; results are unchanged,
// including when both operands are that input, and fed tensors are never overwritten.
TEST(ExecutorTest, InPlaceElementwiseOpsKeepValuesAndFeeds) {
  const Tensor x = Random({256, 512}, 21);
  const std::vector<float> fed(x.f32(), x.f32() + x.num_elements());
  Graph g;
  g.Parameter("x", {256, 512});
  g.Tanh("t", "x");          // x is a feed: not reused
  g.Exp("e", "t");           // t dies here: e takes its buffer
  g.Add("twice", "e", "e");  // both operands are the dying e
  g.Softmax("sm", "twice");
  g.MarkOutput(g.Mul("out", "sm", "x"));
  const auto r = RunGraph(g, {{"x", x}});
  std::vector<double> want;
  for (int64_t i = 0; i < 256; ++i) {
    double sum = 0;
    for (int64_t j = 0; j < 512; ++j)
      sum += std::exp(2 * std::exp(std::tanh(double{fed[i * 512 + j]})));
    for (int64_t j = 0; j < 512; ++j) {
      const double v = fed[i * 512 + j];
      want.push_back(std::exp(2 * std::exp(std::tanh(v))) / sum * v);
    }
  }
  ExpectNear(r.outputs.at("out"), want, 1e-5);
  EXPECT_TRUE(std::equal(fed.begin(), fed.end(), x.f32()));
}

TEST(ExecutorTest, DeadlineBeforeTheFirstOpIsDeadlineExceeded) {
  Graph g;
  g.Parameter("x", {4});
  g.MarkOutput(g.Relu("r", "x"));
  auto program = Compile(g, V4(), {});
  ASSERT_TRUE(program.ok());
  ExecuteOptions options;
  options.deadline = std::chrono::steady_clock::now() - std::chrono::milliseconds(1);
  auto r = Execute(**program, g, {{"x", Random({4}, 1)}}, options);
  EXPECT_EQ(r.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_THAT(r.status().message(), HasSubstr("before op 'x'"));
}

// Found by tests/fuzz/program_fuzzer (UBSan: memcpy from the null buffer of an empty tensor).
TEST(ExecutorTest, ConcatWithAnEmptySliceKeepsTheOtherInputs) {
  Graph g;
  g.Constant("x", {2, 3}, Init::Values({1, -2, 3, 4, 5, -6}));
  g.Slice("empty", "x", {1, 0}, {1, 3});
  g.Concat("cat", {"empty", "x", "empty"}, 0);
  g.MarkOutput("empty");
  g.MarkOutput("cat");
  const auto r = RunGraph(g, {});
  EXPECT_EQ(r.outputs.at("empty").shape(), (Shape{0, 3}));
  EXPECT_EQ(r.outputs.at("cat").shape(), (Shape{2, 3}));
  ExpectNear(r.outputs.at("cat"), {1, -2, 3, 4, 5, -6}, 1e-7);
}

TEST(ExecutorTest, ConvWithZeroInputChannelsIsAllZeros) {
  // x and the filter hold no elements (and so no buffers): the output is the empty sum, 0.
  Graph g;
  g.Parameter("x", {1, 4, 4, 0});
  g.Parameter("f", {3, 3, 0, 2});
  Conv2DParams same;
  same.padding = ConvPadding::kSame;
  g.Conv2D("y", "x", "f", same);
  g.MarkOutput("y");
  std::map<std::string, Tensor> feeds{{"x", Random({1, 4, 4, 0}, 1)},
                                      {"f", Random({3, 3, 0, 2}, 2)}};
  const auto r = RunGraph(g, feeds);
  ASSERT_EQ(r.outputs.at("y").shape(), (Shape{1, 4, 4, 2}));
  ExpectNear(r.outputs.at("y"), std::vector<double>(32, 0.0), 0);
}

TEST(ExecutorTest, Bf16ResultsAreBf16Representable) {
  Graph g;
  g.Parameter("a", {16, 16}, DType::kBF16);
  g.Parameter("b", {16, 16}, DType::kBF16);
  g.Dot("d", "a", "b");
  g.Tanh("t", "d");
  g.Convert("c", "t", DType::kF32);
  g.MarkOutput("d");
  g.MarkOutput("t");
  g.MarkOutput("c");
  std::map<std::string, Tensor> f{{"a", Random({16, 16}, 51, DType::kBF16)},
                                  {"b", Random({16, 16}, 52, DType::kBF16)}};
  const auto r = RunGraph(g, f, Precision::kDefault);
  for (auto id : {"d", "t"}) {
    const Tensor& t = r.outputs.at(id);
    EXPECT_EQ(t.dtype(), DType::kBF16);
    for (int64_t i = 0; i < t.num_elements(); ++i) {
      ASSERT_EQ(t.f32()[i], RoundToBf16(t.f32()[i])) << id << " " << i;
    }
  }
  EXPECT_EQ(r.outputs.at("c").dtype(), DType::kF32);
}

TEST(ExecutorTest, FeedsInitsAndErrors) {
  Graph g;
  g.Parameter("x", {2, 2});
  g.Parameter("w", {2, 2}, DType::kF32, Init::Fill(2));
  g.Mul("y", "x", "w");
  g.MarkOutput("y");
  auto program = Compile(g, V4(), {});
  ASSERT_TRUE(program.ok());
  auto unfed = Execute(**program, g, {});
  EXPECT_EQ(unfed.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(unfed.status().message(), "parameter 'x' was not fed");
  std::map<std::string, Tensor> f{{"x", *Tensor::FromF32({2, 2}, {1, 2, 3, 4})}};
  auto ok = Execute(**program, g, f);
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  ExpectNear(ok->outputs.at("y"), {2, 4, 6, 8}, 0);  // w from its fill init
  f["w"] = *Tensor::FromF32({2, 2}, {1, 1, 1, 1});
  ExpectNear(Execute(**program, g, f)->outputs.at("y"), {1, 2, 3, 4}, 0);
  f["w"] = *Tensor::FromF32({2, 3}, {1, 1, 1, 1, 1, 1});
  EXPECT_THAT(Execute(**program, g, f).status().message(),
              HasSubstr("parameter 'w' expects f32[2,2], got f32[2,3]"));
  f.erase("w");
  f["zz"] = Tensor::Scalar(1);
  EXPECT_THAT(Execute(**program, g, f).status().message(),
              HasSubstr("feed 'zz' does not name a parameter"));
  Graph other;
  other.Parameter("x", {2, 3});
  other.MarkOutput("x");
  EXPECT_EQ(Execute(**program, other, {}).status().code(), StatusCode::kInvalidArgument);
}

TEST(ExecutorTest, StatsComeFromThePlan) {
  Graph g;
  g.Parameter("x", {64, 64});
  g.Relu("r", g.Dot("d", "x", "x"));
  g.MarkOutput("r");
  auto program = Compile(g, V4(), {});
  ASSERT_TRUE(program.ok());
  auto r = Execute(**program, g, {{"x", Random({64, 64}, 61)}});
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->ops.size(), 3u);
  EXPECT_EQ(r->ops[1].id, "d");
  EXPECT_EQ(r->ops[1].cycles, (*program)->plans[1].cost.cycles);
  EXPECT_DOUBLE_EQ(r->ops[1].flops, 2.0 * 64 * 64 * 64);
  EXPECT_GT(r->ops[1].mxu_utilization, 0);
  EXPECT_EQ(r->ops[2].shape, (Shape{64, 64}));
  EXPECT_EQ(r->totals.cycles, (*program)->totals.cycles);
  EXPECT_GT(r->host_ns, 0);
}

TEST(ExecutorTest, CancelledBetweenOps) {
  Graph g;
  g.Parameter("x", {4});
  g.Relu("r", "x");
  g.MarkOutput("r");
  auto program = Compile(g, V4(), {});
  ASSERT_TRUE(program.ok());
  std::atomic<bool> cancel{true};
  ExecuteOptions options;
  options.cancel = &cancel;
  auto r = Execute(**program, g, {{"x", Random({4}, 1)}}, options);
  EXPECT_EQ(r.status().code(), StatusCode::kCancelled);
  EXPECT_THAT(r.status().message(), HasSubstr("before op 'x'"));
}

TEST(ExecutorTest, CacheHitRunsWithTheCallersConstants) {
  CompileCache cache;
  auto build = [](uint64_t seed) {
    Graph g("c");
    g.Constant("w", {8}, Init::Random(seed, Init::Distribution::kUniform, 1.0));
    g.MarkOutput("w");
    return g;
  };
  const Graph a = build(1), b = build(2);
  auto pa = cache.GetOrCompile(a, V4(), {});
  auto pb = cache.GetOrCompile(b, V4(), {});
  ASSERT_TRUE(pa.ok() && pb.ok());
  EXPECT_TRUE(pb->hit);
  auto ra = Execute(*pa->program, a, {});
  auto rb = Execute(*pb->program, b, {});
  auto ra2 = Execute(*pa->program, build(1), {});
  ASSERT_TRUE(ra.ok() && rb.ok() && ra2.ok());
  EXPECT_NE(ra->outputs.at("w").f32_values(), rb->outputs.at("w").f32_values());
  EXPECT_EQ(ra->outputs.at("w").f32_values(), ra2->outputs.at("w").f32_values());  // seeded
  for (float v : ra->outputs.at("w").f32_values()) {
    EXPECT_GE(v, -1.0f);
    EXPECT_LT(v, 1.0f);
  }
}

TEST(ExecutorTest, NormalInitHasTheRequestedScale) {
  Graph g;
  g.Constant("w", {100000}, Init::Random(7, Init::Distribution::kNormal, 0.02));
  g.MarkOutput("w");
  const auto r = RunGraph(g, {});
  double sum = 0, sq = 0;
  for (float v : r.outputs.at("w").f32_values()) {
    sum += v;
    sq += static_cast<double>(v) * v;
  }
  const double mean = sum / 100000, stddev = std::sqrt(sq / 100000 - mean * mean);
  EXPECT_NEAR(mean, 0, 0.001);
  EXPECT_NEAR(stddev, 0.02, 0.001);
}

}  // namespace
}  // namespace tpuemu::engine::reference

namespace tpuemu::engine::reference {
namespace {

// Forward + backward + SGD step of a 2-layer MLP built with the builder API, then the forward
// pass again on the updated weights: the loss must drop, which needs every backward op right.
TEST(ExecutorTest, MlpTrainingStepLowersTheLoss) {
  Graph g("mlp_step");
  g.Parameter("x", {32, 16}, DType::kF32, Init::Random(1));
  std::vector<double> labels;
  for (int i = 0; i < 32; ++i) labels.push_back(i % 4);
  g.Parameter("labels", {32}, DType::kI32, Init::Values(labels));
  g.Constant("w1", {16, 32}, Init::Random(2, Init::Distribution::kNormal, 0.3));
  g.Constant("w2", {32, 4}, Init::Random(3, Init::Distribution::kNormal, 0.3));
  g.Constant("lr", {}, Init::Fill(0.5));
  auto forward = [&](const std::string& p, const std::string& w1, const std::string& w2) {
    g.Dot(p + "z", "x", w1);
    g.Relu(p + "h", p + "z");
    g.Dot(p + "logits", p + "h", w2);
    return g.SoftmaxCrossEntropy(p + "loss", p + "logits", "labels");
  };
  forward("", "w1", "w2");
  g.SoftmaxCrossEntropyGrad("dlogits", "logits", "labels");
  g.Dot("dw2", "h", "dlogits", /*transpose_lhs=*/true);
  g.Dot("dh", "dlogits", "w2", false, /*transpose_rhs=*/true);
  g.ReluGrad("dz", "z", "dh");
  g.Dot("dw1", "x", "dz", true);
  g.Sub("w1b", "w1", g.Mul("", "dw1", "lr"));
  g.Sub("w2b", "w2", g.Mul("", "dw2", "lr"));
  forward("after_", "w1b", "w2b");
  g.MarkOutput("loss");
  g.MarkOutput("after_loss");
  g.MarkOutput("dw1");
  const auto r = RunGraph(g, {});
  EXPECT_EQ(r.outputs.at("dw1").shape(), (Shape{16, 32}));
  const float before = r.outputs.at("loss").f32()[0];
  const float after = r.outputs.at("after_loss").f32()[0];
  EXPECT_GT(before, 0.5f);
  EXPECT_LT(after, before - 0.01f) << "before " << before << " after " << after;
}

}  // namespace
}  // namespace tpuemu::engine::reference
