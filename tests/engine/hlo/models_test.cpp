// The four model modules of testdata/ run on the evaluator and checked against straightforward
// double-precision references of the same math (their dots ask for operand_precision=highest,
// which is f32-accurate on the MXU path).
#include <gtest/gtest.h>

#include <cmath>

#include "engine/hlo/program.h"
#include "tests/engine/hlo/hlo_test_util.h"

namespace tpuemu::engine::hlo {
namespace {

using testing::F32;
using testing::Floats;
using testing::Ints;
using testing::MustRun;
using testing::Testdata;
using Mat = std::vector<std::vector<double>>;

// HLO text run on `slice` (program.h's RunModule after ParseModule).
Result<RunResult> RunText(std::string_view text, const Slice& slice, const RunOptions& options) {
  Result<Module> module = ParseModule(text, options.limits);
  if (!module.ok()) return module.status();
  return RunModule(*module, slice, options);
}

std::vector<float> Seq(size_t n, float scale, float offset) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = std::sin(static_cast<float>(i) * 1.3f + offset) * scale;
  return v;
}

Mat ToMat(const std::vector<float>& v, size_t rows, size_t cols) {
  Mat m(rows, std::vector<double>(cols));
  for (size_t r = 0; r < rows; ++r) {
    for (size_t c = 0; c < cols; ++c) m[r][c] = v[r * cols + c];
  }
  return m;
}

Mat MatMul(const Mat& a, const Mat& b) {
  Mat out(a.size(), std::vector<double>(b[0].size(), 0.0));
  for (size_t i = 0; i < a.size(); ++i) {
    for (size_t k = 0; k < b.size(); ++k) {
      for (size_t j = 0; j < b[0].size(); ++j) out[i][j] += a[i][k] * b[k][j];
    }
  }
  return out;
}

Mat T(const Mat& a) {
  Mat out(a[0].size(), std::vector<double>(a.size()));
  for (size_t i = 0; i < a.size(); ++i) {
    for (size_t j = 0; j < a[0].size(); ++j) out[j][i] = a[i][j];
  }
  return out;
}

void ExpectNear(const std::vector<float>& got, const std::vector<double>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
}

std::vector<double> Flat(const Mat& m) {
  std::vector<double> v;
  for (const auto& row : m) v.insert(v.end(), row.begin(), row.end());
  return v;
}

TEST(HloModels, MlpTrainStepWithAWhileLoop) {
  const std::vector<float> x = Seq(12, 1.0f, 0.1f), y = Seq(8, 0.5f, 0.7f),
                           w1 = Seq(12, 0.6f, 0.3f), b1 = Seq(4, 0.1f, 0.9f),
                           w2 = Seq(8, 0.6f, 1.7f), b2 = Seq(2, 0.1f, 2.1f);
  const Value out =
      MustRun(Testdata("mlp_train_step.hlo"), {F32({4, 3}, x), F32({4, 2}, y), F32({3, 4}, w1),
                                               F32({4}, b1), F32({4, 2}, w2), F32({2}, b2)});
  ASSERT_TRUE(out.is_tuple);
  Mat X = ToMat(x, 4, 3), Y = ToMat(y, 4, 2), W1 = ToMat(w1, 3, 4), W2 = ToMat(w2, 4, 2);
  std::vector<double> B1(b1.begin(), b1.end()), B2(b2.begin(), b2.end());
  double loss = 0;
  for (int step = 0; step < 3; ++step) {
    Mat pre = MatMul(X, W1), h = pre;
    for (size_t i = 0; i < 4; ++i) {
      for (size_t j = 0; j < 4; ++j) {
        pre[i][j] += B1[j];
        h[i][j] = std::max(pre[i][j], 0.0);
      }
    }
    Mat o = MatMul(h, W2), d(4, std::vector<double>(2));
    loss = 0;
    for (size_t i = 0; i < 4; ++i) {
      for (size_t j = 0; j < 2; ++j) {
        const double e = o[i][j] + B2[j] - Y[i][j];
        loss += e * e / 8;
        d[i][j] = e * 0.25;
      }
    }
    const Mat dw2 = MatMul(T(h), d);
    Mat dh = MatMul(d, T(W2));
    for (size_t i = 0; i < 4; ++i) {
      for (size_t j = 0; j < 4; ++j) dh[i][j] = pre[i][j] > 0 ? dh[i][j] : 0;
    }
    const Mat dw1 = MatMul(T(X), dh);
    for (size_t j = 0; j < 4; ++j) {
      double s = 0;
      for (size_t i = 0; i < 4; ++i) s += dh[i][j];
      B1[j] -= 0.1 * s;
    }
    for (size_t j = 0; j < 2; ++j) {
      double s = 0;
      for (size_t i = 0; i < 4; ++i) s += d[i][j];
      B2[j] -= 0.1 * s;
    }
    for (size_t i = 0; i < 3; ++i) {
      for (size_t j = 0; j < 4; ++j) W1[i][j] -= 0.1 * dw1[i][j];
    }
    for (size_t i = 0; i < 4; ++i) {
      for (size_t j = 0; j < 2; ++j) W2[i][j] -= 0.1 * dw2[i][j];
    }
  }
  ExpectNear(Floats(out.elements[0]), Flat(W1), 1e-5);
  ExpectNear(Floats(out.elements[1]), B1, 1e-5);
  ExpectNear(Floats(out.elements[2]), Flat(W2), 1e-5);
  ExpectNear(Floats(out.elements[3]), B2, 1e-5);
  ExpectNear(Floats(out.elements[4]), {loss}, 1e-5);
}

TEST(HloModels, CnnConvolutionPoolAndTheirGradients) {
  const std::vector<float> x = Seq(16, 1.0f, 0.2f), k = Seq(8, 1.0f, 1.1f);
  const Value out = MustRun(Testdata("cnn_step.hlo"), {F32({1, 4, 4, 1}, x), F32({2, 2, 1, 2}, k)});
  // conv[i][j][c] = sum_ab x[i+a][j+b] * k[a][b][c]
  auto X = [&](int i, int j) { return static_cast<double>(x[static_cast<size_t>(i * 4 + j)]); };
  auto K = [&](int a, int b, int c) {
    return static_cast<double>(k[static_cast<size_t>((a * 2 + b) * 2 + c)]);
  };
  double conv[3][3][2], relu[3][3][2], d[3][3][2] = {};
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      for (int c = 0; c < 2; ++c) {
        conv[i][j][c] = 0;
        for (int a = 0; a < 2; ++a) {
          for (int b = 0; b < 2; ++b) conv[i][j][c] += X(i + a, j + b) * K(a, b, c);
        }
        relu[i][j][c] = std::max(conv[i][j][c], 0.0);
      }
    }
  }
  double loss = 0;
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 2; ++j) {
      for (int c = 0; c < 2; ++c) {
        int bi = i, bj = j;  // first maximum in row-major window order
        for (int a = 0; a < 2; ++a) {
          for (int b = 0; b < 2; ++b) {
            if (relu[i + a][j + b][c] > relu[bi][bj][c]) {
              bi = i + a;
              bj = j + b;
            }
          }
        }
        loss += relu[bi][bj][c];
        if (conv[bi][bj][c] > 0) d[bi][bj][c] += 1;
      }
    }
  }
  std::vector<double> dk(8, 0.0), dx(16, 0.0);
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      for (int c = 0; c < 2; ++c) {
        for (int a = 0; a < 2; ++a) {
          for (int b = 0; b < 2; ++b) {
            dk[static_cast<size_t>((a * 2 + b) * 2 + c)] += X(i + a, j + b) * d[i][j][c];
            dx[static_cast<size_t>((i + a) * 4 + j + b)] += K(a, b, c) * d[i][j][c];
          }
        }
      }
    }
  }
  ExpectNear(Floats(out.elements[0]), {loss}, 1e-5);
  ExpectNear(Floats(out.elements[1]), dk, 1e-5);
  ExpectNear(Floats(out.elements[2]), dx, 1e-5);
}

TEST(HloModels, TransformerBlockAttentionAndKvCache) {
  const std::vector<int64_t> tokens{3, 1, 4, 1, 5, 9, 2, 6};
  const std::vector<float> embed = Seq(80, 0.5f, 0.3f), wq = Seq(64, 0.3f, 1.0f),
                           wk = Seq(64, 0.3f, 2.0f), wv = Seq(64, 0.3f, 3.0f),
                           cache = Seq(96, 1.0f, 4.0f);
  const Value out = MustRun(Testdata("transformer_block.hlo"),
                            {Ints(PrimitiveType::kS32, {2, 4}, tokens), F32({10, 8}, embed),
                             F32({8, 8}, wq), F32({8, 8}, wk), F32({8, 8}, wv),
                             F32({2, 6, 8}, cache), Ints(PrimitiveType::kS32, {}, {1})});
  const Mat E = ToMat(embed, 10, 8), Wq = ToMat(wq, 8, 8), Wk = ToMat(wk, 8, 8),
            Wv = ToMat(wv, 8, 8);
  std::vector<double> want_out, want_cache(cache.begin(), cache.end());
  for (size_t b = 0; b < 2; ++b) {
    Mat x(4);
    for (size_t t = 0; t < 4; ++t) x[t] = E[static_cast<size_t>(tokens[b * 4 + t])];
    const Mat q = MatMul(x, Wq), k = MatMul(x, Wk), v = MatMul(x, Wv);
    Mat s = MatMul(q, T(k));
    for (size_t i = 0; i < 4; ++i) {
      double mx = -1e300, den = 0;
      for (size_t j = 0; j < 4; ++j) {
        s[i][j] = j <= i ? s[i][j] * 0.353553385 : -1e9;
        mx = std::max(mx, s[i][j]);
      }
      for (size_t j = 0; j < 4; ++j) den += (s[i][j] = std::exp(s[i][j] - mx));
      for (size_t j = 0; j < 4; ++j) s[i][j] /= den;
    }
    const Mat attn = MatMul(s, v);
    for (size_t t = 0; t < 4; ++t) {
      for (size_t c = 0; c < 8; ++c) want_out.push_back(x[t][c] + attn[t][c]);
      for (size_t c = 0; c < 8; ++c) want_cache[(b * 6 + t + 1) * 8 + c] = k[t][c];  // pos = 1
    }
  }
  ExpectNear(Floats(out.elements[0]), want_out, 1e-5);
  ExpectNear(Floats(out.elements[1]), want_cache, 1e-5);
}

TEST(HloModels, FourCoreDataParallelStepWithAllReduce) {
  Result<Module> m = ParseModule(Testdata("data_parallel_step.hlo"));
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ASSERT_EQ(m->devices(), 4);
  const std::vector<float> w{0.5f, -0.25f, 1.0f};
  Result<EvalResult> r = Evaluate(*m, std::vector<std::vector<Value>>(4, {F32({3}, w)}));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const double xs[4][2][3] = {{{1, 2, 3}, {0, 1, 0}},
                              {{2, 0, 1}, {1, 1, 1}},
                              {{0, 0, 1}, {3, 1, 2}},
                              {{1, 1, 0}, {2, 2, 2}}};
  const double ys[4][2] = {{1, 0}, {2, 1}, {0, 3}, {1, 2}};
  std::vector<double> grad(3, 0.0);
  for (int rep = 0; rep < 4; ++rep) {
    for (int i = 0; i < 2; ++i) {
      double pred = 0;
      for (int j = 0; j < 3; ++j) pred += xs[rep][i][j] * w[static_cast<size_t>(j)];
      for (int j = 0; j < 3; ++j)
        grad[static_cast<size_t>(j)] += (pred - ys[rep][i]) * xs[rep][i][j];
    }
  }
  std::vector<double> want(3);
  for (size_t j = 0; j < 3; ++j) want[j] = w[j] - 0.1 * grad[j] / 4;
  for (const Value& v : r->outputs) ExpectNear(Floats(v), want, 1e-6);
}

TEST(HloModels, RunPricesWithTheRunsCountsAndEstimateMatchesForCountedLoops) {
  const std::string text = Testdata("mlp_train_step.hlo");
  auto slice = Slice::FromAcceleratorType("v5litepod-1");
  ASSERT_TRUE(slice.ok());
  RunOptions run_options;
  run_options.inputs.seed = 3;
  Result<RunResult> run = RunText(text, *slice, run_options);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  Result<Module> parsed = ParseModule(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  Result<ModuleCost> estimate = PriceModule(*parsed, *slice);
  ASSERT_TRUE(estimate.ok()) << estimate.status().ToString();
  // The loop's trip count is inferred statically (i < 3, from 0, step 1): same totals.
  EXPECT_EQ(run->cost.cycles, estimate->cycles);
  EXPECT_DOUBLE_EQ(run->cost.flops, estimate->flops);
  EXPECT_TRUE(estimate->warnings.empty());
  bool found = false;
  for (const InstructionCost& row : estimate->rows) {
    if (row.name == "h_dot") {
      found = true;
      EXPECT_EQ(row.count, 3);
      EXPECT_EQ(row.unit, "mxu");
      EXPECT_EQ(row.passes, 6);
      EXPECT_EQ(row.op_name, "jit(train_step)/dense1/dot_general");
    }
  }
  EXPECT_TRUE(found);
}

TEST(HloModels, AStepWithTheLastStepsCountsIsNotPricedAgain) {
  const std::string text = Testdata("mlp_train_step.hlo");
  auto slice = Slice::FromAcceleratorType("v5litepod-1");
  ASSERT_TRUE(slice.ok());
  RunOptions options;
  options.inputs.seed = 3;
  Result<RunResult> first = RunText(text, *slice, options);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_TRUE(first->repriced);
  ASSERT_FALSE(first->executions.empty());

  // The same inputs run the same counts: the last step's cost is this step's.
  options.last_run = &*first;
  Result<RunResult> second = RunText(text, *slice, options);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_FALSE(second->repriced);
  EXPECT_EQ(second->executions, first->executions);
  EXPECT_EQ(second->cost.cycles, first->cost.cycles);
  EXPECT_EQ(Floats(second->outputs[0]), Floats(first->outputs[0]));

  // Other counts (here: a doctored last run) are priced from this run's own.
  RunResult other = *first;
  other.executions[0][0] += 1;
  other.cost.cycles = 1;
  options.last_run = &other;
  Result<RunResult> third = RunText(text, *slice, options);
  ASSERT_TRUE(third.ok()) << third.status().ToString();
  EXPECT_TRUE(third->repriced);
  EXPECT_EQ(third->cost.cycles, first->cost.cycles);
}

// What a job does with its submit-time price: a module whose counts the text fixes is priced
// once, and that price is the one a run would compute from its own counts.
TEST(HloModels, AStaticPriceWithExactCountsIsTheRunsPrice) {
  auto slice = Slice::FromAcceleratorType("v5litepod-4");
  ASSERT_TRUE(slice.ok());
  for (const char* file :
       {"mlp_train_step.hlo", "cnn_step.hlo", "transformer_block.hlo", "data_parallel_step.hlo"}) {
    SCOPED_TRACE(file);
    const std::string text = Testdata(file);
    CostOptions cost;
    cost.allow_unsupported = true;
    Result<Module> module = ParseModule(text);
    ASSERT_TRUE(module.ok()) << module.status().ToString();
    Result<ModuleCost> priced = PriceModule(*module, *slice, cost);
    ASSERT_TRUE(priced.ok()) << priced.status().ToString();
    ASSERT_TRUE(priced->counts_exact);
    RunOptions options;
    options.inputs.seed = 5;
    options.allow_unsupported_pricing = true;
    Result<RunResult> counted = RunModule(*module, *slice, options);
    ASSERT_TRUE(counted.ok()) << counted.status().ToString();
    ASSERT_TRUE(counted->repriced);
    options.priced = &*priced;
    Result<RunResult> reused = RunModule(*module, *slice, options);
    ASSERT_TRUE(reused.ok()) << reused.status().ToString();
    EXPECT_FALSE(reused->repriced);
    EXPECT_EQ(Floats(reused->outputs[0]), Floats(counted->outputs[0]));
    EXPECT_EQ(reused->cost.cycles, counted->cost.cycles);
    EXPECT_DOUBLE_EQ(reused->cost.flops, counted->cost.flops);
    EXPECT_DOUBLE_EQ(reused->cost.hbm_bytes, counted->cost.hbm_bytes);
    ASSERT_EQ(reused->cost.rows.size(), counted->cost.rows.size());
    for (size_t i = 0; i < reused->cost.rows.size(); ++i) {
      EXPECT_EQ(reused->cost.rows[i].name, counted->cost.rows[i].name);
      EXPECT_EQ(reused->cost.rows[i].count, counted->cost.rows[i].count);
      EXPECT_EQ(reused->cost.rows[i].cycles, counted->cost.rows[i].cycles);
    }
    EXPECT_EQ(reused->cost.warnings, counted->cost.warnings);
  }
}

}  // namespace
}  // namespace tpuemu::engine::hlo
