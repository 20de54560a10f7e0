// LowerGraph (engine/frontend/from_graph.h): every OpKind lowered, parsed, verified and run on the
// HLO evaluator against the retired native executor (tests/engine/reference/, kept as this test's
// oracle: its kernels were written op by op against hand-computed values) on the same random
// inputs at the same precision.
//
// Agreement today (the largest |native - hlo| / max|native| of an output seen here, on this
// machine's oneDNN bf16 GEMM backend; each test prints its own as "[ agree ]"):
//
// BIT-EXACT: parameters and constants, broadcast (numpy and explicit dims), reshape, transpose,
//   concat, slice, convert (f32/bf16/s32), add/sub/mul/div/max/min with broadcasting, neg, relu,
//   relu_grad, log and rsqrt (both stacks call std::log and 1/std::sqrt), exp, tanh, gelu and
//   gelu_grad (both stacks use engine/vector_math's ExpF/TanhF since fe3c7db, the build has
//   -ffp-contract=off, and the gelu formulas are written in GeluArray/GeluGradArray's order of
//   operations), reduce max, dot without batch dims (every transpose; a rank-2 rhs shared across
//   the lhs batch, which natively folds into M) and conv2d forward (VALID, SAME stride 2, explicit
//   pads, 1x1) at DEFAULT and HIGHEST: both stacks run the same GEMM (engine/kernels/gemm.h) over
//   the same K order.
//
// WITHIN A TOLERANCE, and why (what the next step must close):
//   - softmax (7.7e-8), cross-entropy loss (8.7e-8) and grad (6.0e-8): natively the sums of exp
//     are in double and softmax scales by a float reciprocal where HLO divides; the native
//     softmax off the last axis and the cross-entropy call std::exp, not ExpF.
//   - reduce sum/mean (up to 5.7e-7 for 600 elements): native accumulates in double over eight
//     lanes, the evaluator folds in f32 in row-major order (XLA's reduce).
//   - conv2d_backprop_input (1.2e-7) / _filter (1.5e-7): natively a GEMM then a col2im sum, and one
//     GEMM over (image, row, col); XLA's transpose convolutions sum the same products with the
//     window position outermost. The 1x1 conv's dx is exact (one GEMM in both).
//   - dot with batch dims, and a rank-2 lhs shared across the rhs batch (6e-8, 1-2 ulp): natively
//     one batched GEMM, in the evaluator one GEMM per item (or one wider GEMM); the oneDNN bf16
//     backend's batched kernel orders its sums differently. Exact on TPUEMU_GEMM_BACKEND=eigen and
//     onednn_f32.
//   - the MLP step (1.0e-7) and the transformer step (4.2e-7, its mean loss): the above compounded.
//   - bf16 outputs: the above through one bf16 rounding; exact on these inputs, at most 1 bf16 ulp.
//
// Known semantic edges the random inputs avoid: relu(NaN) is 0 natively but NaN in HLO (max);
// convert f32->bf16 flushes subnormals natively (TPU) but keeps them in the evaluator (XLA CPU);
// an empty batch gives cross-entropy 0 natively, NaN in HLO; out-of-range labels are an error
// natively and an all-zero one-hot in HLO.
#include "engine/frontend/from_graph.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>

#include "engine/frontend/compiler.h"
#include "engine/frontend/init_values.h"
#include "engine/hardware/hardware.h"
#include "engine/hlo/evaluator.h"
#include "engine/hlo/parser.h"
#include "tests/engine/reference/executor.h"

namespace tpuemu::engine::hlo {
namespace {

using ::testing::HasSubstr;

// |native - hlo| <= abs + rel·scale, scale = max |native| over the output (so cancellation in a
// sum is judged against the values summed, not the tiny result). Both 0: bit-exact.
struct Tolerance {
  double rel = 0;
  double abs = 0;
};
constexpr Tolerance kExact{};
constexpr Tolerance kUlps{1e-6, 0};          // f32 transcendentals, reordered f32 sums
constexpr Tolerance kSteps{2e-6, 0};         // a training step: the above, compounded
constexpr Tolerance kBf16Ulp{1.0 / 128, 0};  // one bf16 rounding of an f32 difference

struct AgreeOptions {
  Precision precision = Precision::kDefault;
  Tolerance tol;
  bool positive = false;  // floating feeds in [0.1, 2.1) (log, rsqrt)
  int32_t labels = 4;     // int32 feeds in [0, labels)
  uint32_t seed = 7;
};

Tensor RandomFeed(const Op& op, const AgreeOptions& o, std::mt19937& rng) {
  const int64_t n = op.shape.NumElements();
  if (op.dtype == DType::kI32) {
    std::uniform_int_distribution<int32_t> dist(0, o.labels - 1);
    std::vector<int32_t> v(static_cast<size_t>(n));
    for (auto& x : v) x = dist(rng);
    return *Tensor::FromI32(op.shape, v);
  }
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<float> uniform(0.1f, 2.1f);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = o.positive ? uniform(rng) : normal(rng);
  Tensor t = *Tensor::FromF32(op.shape, std::move(v), op.dtype);  // rounds to bf16
  return t;
}

// Lowers `g`, checks that the text parses and verifies, runs both stacks on the same values
// (random feeds for parameters, the constants' own Init for constants) and compares every
// output. Prints the largest differences seen (and the module when TPUEMU_FROM_GRAPH_DUMP is set).
void ExpectAgree(const Graph& g, const AgreeOptions& o = {}) {
  SCOPED_TRACE("graph " + g.name() + " at " + std::string(PrecisionName(o.precision)));
  ASSERT_TRUE(g.status().ok()) << g.status().ToString();
  Result<GraphLowering> lowered = LowerGraph(g);
  ASSERT_TRUE(lowered.ok()) << lowered.status().ToString();
  if (std::getenv("TPUEMU_FROM_GRAPH_DUMP") != nullptr) std::printf("%s\n", lowered->text.c_str());
  Result<Module> module = ParseModule(lowered->text);
  ASSERT_TRUE(module.ok()) << module.status().ToString() << "\n" << lowered->text;

  std::mt19937 rng(o.seed);
  std::map<std::string, Tensor> feeds;
  std::vector<Value> args;
  for (const std::string& id : lowered->parameters) {
    const Op& op = *g.Find(id);
    if (op.kind == OpKind::kConstant) {
      Tensor t = Tensor::Uninitialized(op.dtype, op.shape);
      ASSERT_TRUE(MaterializeInit(op.attrs.init, t).ok());
      args.push_back(ArgumentOf(t));
      continue;
    }
    feeds[id] = RandomFeed(op, o, rng);
    args.push_back(ArgumentOf(feeds[id]));
  }
  CompileOptions copts;
  copts.precision = o.precision;
  auto program = Compile(g, *Slice::FromAcceleratorType("v4-8"), copts);
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  auto native = reference::Execute(**program, g, feeds);
  ASSERT_TRUE(native.ok()) << native.status().ToString();
  EvalOptions eopts;
  eopts.precision = o.precision;
  auto hlo = Evaluate(*module, {args}, eopts);
  ASSERT_TRUE(hlo.ok()) << hlo.status().ToString() << "\n" << lowered->text;
  const Value& root = hlo->outputs[0];
  ASSERT_TRUE(root.is_tuple);
  ASSERT_EQ(root.elements.size(), lowered->outputs.size());

  for (size_t i = 0; i < lowered->outputs.size(); ++i) {
    const std::string& id = lowered->outputs[i];
    const Tensor& want = native->outputs.at(id);
    const Array& got = *root.elements[i].array;
    ASSERT_EQ(got.dims, want.shape().dims) << id;
    ASSERT_EQ(got.type, LoweredType(want.dtype())) << id;
    double scale = 0, max_abs = 0;
    for (int64_t k = 0; k < want.num_elements(); ++k) {
      scale = std::max(scale, std::abs(want.dtype() == DType::kI32 ? double(want.i32()[k])
                                                                   : double(want.f32()[k])));
    }
    int64_t mismatches = 0;
    for (int64_t k = 0; k < want.num_elements(); ++k) {
      const auto kk = static_cast<size_t>(k);
      const double w = want.dtype() == DType::kI32 ? double(want.i32()[k]) : want.f32()[k];
      const double h = got.floating() ? double(got.f[kk]) : double(got.i[kk]);
      const double diff = std::abs(w - h);
      max_abs = std::max(max_abs, diff);
      const bool ok = (o.tol.rel == 0 && o.tol.abs == 0) ? (w == h || (w != w && h != h))
                                                         : diff <= o.tol.abs + o.tol.rel * scale;
      if (!ok && ++mismatches <= 5) {
        ADD_FAILURE() << id << "[" << k << "]: native " << w << " vs hlo " << h;
      }
    }
    std::printf("[ agree    ] %s/%s %s: max |diff| %.3g (rel to max|x| %.3g)\n", g.name().c_str(),
                id.c_str(), std::string(PrecisionName(o.precision)).c_str(), max_abs,
                scale > 0 ? max_abs / scale : 0.0);
  }
}

AgreeOptions At(Precision p, Tolerance tol = kExact) {
  AgreeOptions o;
  o.precision = p;
  o.tol = tol;
  return o;
}
AgreeOptions Within(Tolerance tol) { return At(Precision::kDefault, tol); }

// --- The module's shape -----------------------------------------------------------------------

TEST(FromGraphTest, ParametersAreParametersThenConstantsInGraphOrderAndTheRootIsATuple) {
  Graph g("my graph");
  g.Parameter("x", {2, 3});
  g.Constant("w 1", {3, 4}, Init::Random(3));
  g.Parameter("2b", {2, 4});
  g.Add("y", g.Dot("xw", "x", "w 1"), "2b");
  g.MarkOutput("y");
  auto lowered = LowerGraph(g);
  ASSERT_TRUE(lowered.ok()) << lowered.status().ToString();
  EXPECT_EQ(lowered->parameters, (std::vector<std::string>{"x", "w 1", "2b"}));
  EXPECT_EQ(lowered->outputs, (std::vector<std::string>{"y"}));
  const std::string& t = lowered->text;
  EXPECT_THAT(t, HasSubstr("HloModule my_graph, entry_computation_layout={(f32[2,3]{1,0}, "
                           "f32[3,4]{1,0}, f32[2,4]{1,0})->(f32[2,4]{1,0})}"));
  EXPECT_THAT(t,
              HasSubstr("w_1 = f32[3,4]{1,0} parameter(1), metadata={op_name=\"my graph/w 1\"}"));
  EXPECT_THAT(t, HasSubstr("_2b = f32[2,4]{1,0} parameter(2)"));
  EXPECT_THAT(t, HasSubstr("xw = f32[2,4]{1,0} dot(x, w_1), lhs_contracting_dims={1}, "
                           "rhs_contracting_dims={0}, metadata={op_name=\"my graph/xw\"}"));
  EXPECT_THAT(t, HasSubstr("ROOT tuple = (f32[2,4]{1,0}) tuple(y)"));
  ASSERT_TRUE(ParseModule(t).ok()) << t;
  ExpectAgree(g);
}

TEST(FromGraphTest, NamesStayUniqueWhenIdsSanitiseAlike) {
  Graph g("names");
  g.Parameter("a-b", {2});
  g.Parameter("a/b", {2});
  g.Parameter("a_b", {2});
  g.Relu("a_b.constant", g.Add("s", "a-b", "a/b"));  // the relu's helper wants this name
  g.MarkOutput("a_b.constant");
  g.MarkOutput("a_b");
  auto lowered = LowerGraph(g);
  ASSERT_TRUE(lowered.ok());
  EXPECT_THAT(lowered->text, HasSubstr("a_b.1 = f32[2]{0} parameter(2)"));
  ExpectAgree(g);
}

TEST(FromGraphTest, AGraphWithAnErrorIsInvalidArgument) {
  Graph g("bad");
  g.Parameter("x", {2, 3});
  g.Dot("d", "x", "x");
  auto lowered = LowerGraph(g);
  ASSERT_FALSE(lowered.ok());
  EXPECT_EQ(lowered.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(lowered.status().message(), HasSubstr("d"));
}

// --- Data movement: exact
// -------------------------------------------------------------------------

TEST(FromGraphTest, BroadcastReshapeTransposeConcatSliceAreExact) {
  Graph g("movement");
  g.Parameter("x", {3, 1});
  g.Parameter("v", {4});
  g.Parameter("m", {2, 3, 4});
  g.MarkOutput(g.Broadcast("numpy", "x", {2, 3, 5}));
  g.MarkOutput(g.Broadcast("explicit", "x", {3, 2, 5}, std::vector<int64_t>{0, 2}));
  g.MarkOutput(g.Broadcast("into_middle", "v", {2, 4, 3}, std::vector<int64_t>{1}));
  g.MarkOutput(g.Reshape("reshape", "m", {4, -1}));
  g.MarkOutput(g.Transpose("transpose", "m", {2, 0, 1}));
  g.MarkOutput(g.Concat("concat", {"m", "m", g.Slice("part", "m", {0, 0, 1}, {2, 3, 3})}, -1));
  g.MarkOutput(g.Slice("slice", "m", {1, 1, 0}, {2, 3, 4}));
  ExpectAgree(g);
}

TEST(FromGraphTest, ConvertBetweenF32Bf16AndInt32IsExact) {
  Graph g("convert");
  g.Parameter("x", {3, 4});
  g.Parameter("labels", {5}, DType::kI32);
  g.MarkOutput(g.Convert("to_bf16", "x", DType::kBF16));
  g.MarkOutput(g.Convert("back", "to_bf16", DType::kF32));
  g.MarkOutput(
      g.Convert("to_int", g.Mul("big", "x", g.Constant("k", {}, Init::Fill(7))), DType::kI32));
  g.MarkOutput(g.Convert("int_to_f32", "labels", DType::kF32));
  g.MarkOutput(g.Convert("int_to_bf16", "labels", DType::kBF16));
  g.MarkOutput(g.Convert("same", "x", DType::kF32));
  ExpectAgree(g);
}

// --- Elementwise ---------------------------------------------------------------------------------

TEST(FromGraphTest, BinaryOpsWithNumpyBroadcastingAreExact) {
  for (DType dt : {DType::kF32, DType::kBF16}) {
    Graph g(dt == DType::kF32 ? "binary" : "binary_bf16");
    g.Parameter("a", {2, 3, 4}, dt);
    g.Parameter("row", {4}, dt);
    g.Parameter("col", {3, 1}, dt);
    g.Parameter("one", {1}, dt);
    g.Parameter("s", {}, dt);
    g.Parameter("b", {2, 1, 4}, dt);
    g.MarkOutput(g.Add("add", "a", "row"));
    g.MarkOutput(g.Sub("sub", "col", "a"));
    g.MarkOutput(g.Mul("mul", "a", "one"));
    g.MarkOutput(g.Div("div", "s", "a"));
    g.MarkOutput(g.Max("max", "b", "col"));  // both operands broadcast: [2,3,4]
    g.MarkOutput(g.Min("min", "a", "a"));
    ExpectAgree(g);
  }
}

TEST(FromGraphTest, NegReluReluGradLogRsqrtAreExact) {
  for (DType dt : {DType::kF32, DType::kBF16}) {
    Graph g(dt == DType::kF32 ? "unary" : "unary_bf16");
    g.Parameter("x", {4, 33}, dt);
    g.Parameter("dy", {4, 33}, dt);
    g.MarkOutput(g.Neg("neg", "x"));
    g.MarkOutput(g.Relu("relu", "x"));
    g.MarkOutput(g.ReluGrad("relu_grad", "x", "dy"));
    ExpectAgree(g);
    Graph p(dt == DType::kF32 ? "unary_positive" : "unary_positive_bf16");
    p.Parameter("x", {4, 33}, dt);
    p.MarkOutput(p.Log("log", "x"));
    p.MarkOutput(p.Rsqrt("rsqrt", "x"));
    AgreeOptions o;
    o.positive = true;
    ExpectAgree(p, o);
  }
}

TEST(FromGraphTest, TanhExpGeluAndGeluGradAreExact) {
  Graph g("transcendental");
  g.Parameter("x", {8, 65});
  g.Parameter("dy", {8, 65});
  g.MarkOutput(g.Tanh("tanh", "x"));
  g.MarkOutput(g.Exp("exp", "x"));
  g.MarkOutput(g.Gelu("gelu", "x"));
  g.MarkOutput(g.GeluGrad("gelu_grad", "x", "dy"));
  ExpectAgree(g);
  Graph b("transcendental_bf16");
  b.Parameter("x", {8, 65}, DType::kBF16);
  b.Parameter("dy", {8, 65}, DType::kBF16);
  b.MarkOutput(b.Tanh("tanh", "x"));
  b.MarkOutput(b.Exp("exp", "x"));
  b.MarkOutput(b.Gelu("gelu", "x"));
  b.MarkOutput(b.GeluGrad("gelu_grad", "x", "dy"));
  ExpectAgree(b);
}

// --- Reductions ---------------------------------------------------------------------------------

TEST(FromGraphTest, ReduceSumMeanWithinUlpsAndMaxExact) {
  Graph g("reduce");
  g.Parameter("x", {3, 50, 4});
  g.MarkOutput(g.Reduce("sum_all", "x", ReduceKind::kSum));
  g.MarkOutput(g.Reduce("sum_outer", "x", ReduceKind::kSum, {0, 2}, /*keep_dims=*/true));
  g.MarkOutput(g.Reduce("sum_middle", "x", ReduceKind::kSum, {1}));
  g.MarkOutput(g.Reduce("mean_last", "x", ReduceKind::kMean, {-1}, /*keep_dims=*/true));
  g.MarkOutput(g.Reduce("mean_all", "x", ReduceKind::kMean));
  ExpectAgree(g, Within(kUlps));
  Graph m("reduce_max");
  m.Parameter("x", {3, 50, 4});
  m.MarkOutput(m.Reduce("max_middle", "x", ReduceKind::kMax, {1}));
  m.MarkOutput(m.Reduce("max_keep", "x", ReduceKind::kMax, {0, 2}, /*keep_dims=*/true));
  m.MarkOutput(m.Reduce("max_all", "x", ReduceKind::kMax));
  ExpectAgree(m);
  Graph b("reduce_bf16");
  b.Parameter("x", {3, 50, 4}, DType::kBF16);
  b.MarkOutput(b.Reduce("sum", "x", ReduceKind::kSum, {1}));
  b.MarkOutput(b.Reduce("mean", "x", ReduceKind::kMean, {0, 1}, /*keep_dims=*/true));
  b.MarkOutput(b.Reduce("max", "x", ReduceKind::kMax, {2}));
  ExpectAgree(b, Within(kBf16Ulp));
}

TEST(FromGraphTest, SoftmaxOnAnyAxisWithinUlps) {
  Graph g("softmax");
  g.Parameter("x", {4, 6, 37});
  g.MarkOutput(g.Softmax("last", "x"));
  g.MarkOutput(g.Softmax("middle", "x", 1));
  g.MarkOutput(g.Softmax("first", "x", 0));
  ExpectAgree(g, Within(kUlps));
  Graph b("softmax_bf16");
  b.Parameter("x", {4, 37}, DType::kBF16);
  b.MarkOutput(b.Softmax("last", "x"));
  ExpectAgree(b, Within(kBf16Ulp));
}

TEST(FromGraphTest, SoftmaxCrossEntropyAndItsGradWithinUlps) {
  Graph g("cross_entropy");
  g.Parameter("logits", {16, 10});
  g.Parameter("labels", {16}, DType::kI32);
  g.MarkOutput(g.SoftmaxCrossEntropy("loss", "logits", "labels"));
  g.MarkOutput(g.SoftmaxCrossEntropyGrad("dlogits", "logits", "labels"));
  AgreeOptions o = Within(kUlps);
  o.labels = 10;
  ExpectAgree(g, o);
  Graph b("cross_entropy_bf16");
  b.Parameter("logits", {16, 10}, DType::kBF16);
  b.Parameter("labels", {16}, DType::kI32);
  b.MarkOutput(b.SoftmaxCrossEntropy("loss", "logits", "labels"));
  b.MarkOutput(b.SoftmaxCrossEntropyGrad("dlogits", "logits", "labels"));
  o.tol = kBf16Ulp;
  ExpectAgree(b, o);
}

// --- MXU ops ------------------------------------------------------------------------------------

TEST(FromGraphTest, DotWithoutBatchIsExactAtDefaultAndHighest) {
  for (Precision p : {Precision::kDefault, Precision::kHighest}) {
    Graph g("dot");
    g.Parameter("a", {5, 7});
    g.Parameter("b", {7, 3});
    g.Parameter("at", {7, 5});
    g.Parameter("bt", {3, 7});
    g.Parameter("ba", {2, 4, 5, 7});
    g.MarkOutput(g.Dot("plain", "a", "b"));
    g.MarkOutput(g.Dot("t_lhs", "at", "b", true, false));
    g.MarkOutput(g.Dot("t_rhs", "a", "bt", false, true));
    g.MarkOutput(g.Dot("t_both", "at", "bt", true, true));
    // Natively the batch folds into M (one GEMM); the HLO dot has no batch dims: the same GEMM.
    g.MarkOutput(g.Dot("shared_rhs", "ba", "b"));
    g.MarkOutput(g.Dot("shared_rhs_t", "ba", "bt", false, true));
    ExpectAgree(g, At(p));
  }
  Graph b("dot_bf16");
  b.Parameter("a", {2, 5, 7}, DType::kBF16);
  b.Parameter("b", {7, 3}, DType::kBF16);
  b.MarkOutput(b.Dot("d", "a", "b"));
  ExpectAgree(b);
}

// Natively one batched GEMM (engine/kernels/gemm.h, batch > 1); the evaluator runs one GEMM per
// batch item (and a shared lhs as one wider GEMM). Exact on the Eigen and oneDNN-f32 backends; the
// oneDNN bf16 primitive's batched kernel sums the bf16 products in another order than its
// single-matrix one, 1-2 ulp apart.
TEST(FromGraphTest, BatchedDotAndSharedLhsWithinUlps) {
  for (Precision p : {Precision::kDefault, Precision::kHighest}) {
    Graph g("dot_batched");
    g.Parameter("a", {5, 7});
    g.Parameter("at", {7, 5});
    g.Parameter("ba", {2, 4, 5, 7});
    g.Parameter("bat", {2, 4, 7, 5});
    g.Parameter("bb", {2, 4, 7, 3});
    g.Parameter("bbt", {2, 4, 3, 7});
    g.MarkOutput(g.Dot("batched", "ba", "bb"));
    g.MarkOutput(g.Dot("batched_t", "bat", "bbt", true, true));
    g.MarkOutput(g.Dot("shared_lhs", "a", "bb"));
    g.MarkOutput(g.Dot("shared_lhs_t", "at", "bbt", true, true));
    ExpectAgree(g, At(p, kUlps));
  }
}

// One conv2d with its two backprops at `params` (x [2,h,w,3], filter [fh,fw,3,4]).
Graph ConvGraph(const std::string& name, int64_t h, int64_t w, int64_t fh, int64_t fw,
                Conv2DParams params, DType dt = DType::kF32) {
  Graph g(name);
  g.Parameter("x", {2, h, w, 3}, dt);
  g.Parameter("f", {fh, fw, 3, 4}, dt);
  const std::string y = g.Conv2D("y", "x", "f", params);
  g.MarkOutput(y);
  if (!g.status().ok()) return g;
  g.Parameter("dy", g.Find(y)->shape, dt);
  g.MarkOutput(g.Conv2DBackpropInput("dx", {2, h, w, 3}, "f", "dy", params));
  g.MarkOutput(g.Conv2DBackpropFilter("df", "x", {fh, fw, 3, 4}, "dy", params));
  return g;
}

TEST(FromGraphTest, Conv2DAndItsBackpropsAtDefaultAndHighest) {
  Conv2DParams valid;
  Conv2DParams same2;
  same2.stride_h = same2.stride_w = 2;
  same2.padding = ConvPadding::kSame;
  Conv2DParams explicit_pads;
  explicit_pads.stride_h = 2;
  explicit_pads.padding = ConvPadding::kExplicit;
  explicit_pads.pads = {1, 2, 0, 3};
  Conv2DParams valid_stride;  // trailing rows the forward conv never reads: negative HLO pad
  valid_stride.stride_h = valid_stride.stride_w = 2;
  for (Precision p : {Precision::kDefault, Precision::kHighest}) {
    ExpectAgree(ConvGraph("conv_valid", 6, 5, 3, 2, valid), At(p, kUlps));
    ExpectAgree(ConvGraph("conv_same_stride2", 7, 6, 3, 3, same2), At(p, kUlps));
    ExpectAgree(ConvGraph("conv_explicit", 6, 5, 3, 2, explicit_pads), At(p, kUlps));
    ExpectAgree(ConvGraph("conv_valid_stride2", 8, 7, 3, 2, valid_stride), At(p, kUlps));
    ExpectAgree(ConvGraph("conv_pointwise", 4, 4, 1, 1, valid), At(p, kUlps));
  }
  ExpectAgree(ConvGraph("conv_bf16", 7, 6, 3, 3, same2, DType::kBF16), Within(kBf16Ulp));
}

// --- Whole training steps -----------------------------------------------------------------------

// A two-layer MLP's forward, cross-entropy loss, backward and SGD update (the shape of the
// service's "mlp" workload), weights as random-init constants.
Graph MlpStep() {
  Graph g("mlp_step");
  g.Parameter("x", {8, 16});
  g.Parameter("labels", {8}, DType::kI32);
  g.Constant("w1", {16, 32}, Init::Random(1, Init::Distribution::kNormal, 0.25));
  g.Constant("b1", {32}, Init::Fill(0.1));
  g.Constant("w2", {32, 10}, Init::Random(2, Init::Distribution::kNormal, 0.25));
  g.Constant("b2", {10}, Init::Fill(0));
  g.Constant("lr", {}, Init::Fill(0.05));
  g.Add("pre", g.Dot("xw1", "x", "w1"), "b1");
  g.Relu("h", "pre");
  g.Add("logits", g.Dot("hw2", "h", "w2"), "b2");
  g.MarkOutput(g.SoftmaxCrossEntropy("loss", "logits", "labels"));
  g.SoftmaxCrossEntropyGrad("dlogits", "logits", "labels");
  g.Dot("dw2", "h", "dlogits", /*transpose_lhs=*/true);
  g.Reduce("db2", "dlogits", ReduceKind::kSum, {0});
  g.ReluGrad("dpre", "pre", g.Dot("dh", "dlogits", "w2", false, /*transpose_rhs=*/true));
  g.Dot("dw1", "x", "dpre", /*transpose_lhs=*/true);
  g.Reduce("db1", "dpre", ReduceKind::kSum, {0});
  for (const char* w : {"w1", "b1", "w2", "b2"}) {
    const std::string d = std::string("d") + w;
    g.MarkOutput(g.Sub(std::string(w) + "_new", w, g.Mul(d + "_step", "lr", d)));
  }
  return g;
}

// A transformer block's forward (two-head attention through reshape/transpose, softmax, a
// layer norm, a gelu MLP, the heads split by slice and joined by concat) and the backward of its
// MLP, with a bf16 copy of the output.
Graph TransformerStep() {
  Graph g("transformer_step");
  const int64_t b = 2, s = 8, d = 16, h = 2, f = 32;
  g.Parameter("x", {b, s, d});
  for (const char* w : {"wq", "wk", "wv", "wo"}) {
    g.Constant(w, {d, d}, Init::Random(w[1], Init::Distribution::kNormal, 0.25));
  }
  g.Constant("w_in", {d, f}, Init::Random(11, Init::Distribution::kUniform, 0.3));
  g.Constant("w_out", {f, d}, Init::Random(12, Init::Distribution::kUniform, 0.3));
  g.Constant("scale", {}, Init::Fill(1.0 / std::sqrt(double(d / h))));
  g.Constant("eps", {}, Init::Fill(1e-5));
  auto heads = [&](const std::string& name, const char* w) {
    g.Reshape(name + "_4d", g.Dot(name, "x", w), {b, s, h, d / h});
    return g.Transpose(name + "_heads", name + "_4d", {0, 2, 1, 3});  // [b, h, s, d/h]
  };
  const std::string q = heads("q", "wq"), k = heads("k", "wk"), v = heads("v", "wv");
  g.Mul("scores", g.Dot("qk", q, k, false, /*transpose_rhs=*/true), "scale");
  g.Softmax("attn", "scores");
  g.Transpose("ctx_t", g.Dot("ctx", "attn", v), {0, 2, 1, 3});
  g.Reshape("ctx_flat", "ctx_t", {b, s, d});
  // The heads' halves of the output projection, split and joined again.
  g.Concat("ctx_joined",
           {g.Slice("ctx_h0", "ctx_flat", {0, 0, 0}, {b, s, d / 2}),
            g.Slice("ctx_h1", "ctx_flat", {0, 0, d / 2}, {b, s, d})},
           -1);
  g.Add("h1", "x", g.Dot("proj", "ctx_joined", "wo"));
  g.Sub("centred", "h1", g.Reduce("mu", "h1", ReduceKind::kMean, {-1}, true));
  g.Reduce("var", g.Mul("sq", "centred", "centred"), ReduceKind::kMean, {-1}, true);
  g.Mul("norm", "centred", g.Rsqrt("inv", g.Add("var_eps", "var", "eps")));
  g.Gelu("act", g.Dot("up", "norm", "w_in"));
  g.Add("out", "h1", g.Dot("down", "act", "w_out"));
  g.MarkOutput("out");
  g.MarkOutput(g.Convert("out_bf16", "out", DType::kBF16));
  g.MarkOutput(g.Reduce("loss", g.Mul("out_sq", "out", "out"), ReduceKind::kMean));
  // Backward of the MLP for loss = mean(out²): dout = 2·out / n.
  g.Constant("two_over_n", {}, Init::Fill(2.0 / double(b * s * d)));
  g.Mul("dout", "out", "two_over_n");
  g.GeluGrad("dup", "up", g.Dot("dact", "dout", "w_out", false, /*transpose_rhs=*/true));
  g.MarkOutput(g.Reduce("dw_in", g.Dot("dw_in_b", "norm", "dup", /*transpose_lhs=*/true),
                        ReduceKind::kSum, {0}));
  g.MarkOutput(g.Reduce("dw_out", g.Dot("dw_out_b", "act", "dout", /*transpose_lhs=*/true),
                        ReduceKind::kSum, {0}));
  g.MarkOutput(g.Dot("dnorm", "dup", "w_in", false, /*transpose_rhs=*/true));
  g.MarkOutput(g.Reduce("attn_peak", "attn", ReduceKind::kMax, {-1}));
  return g;
}

TEST(FromGraphTest, MlpTrainingStepAgreesAtDefaultAndHighest) {
  for (Precision p : {Precision::kDefault, Precision::kHighest}) {
    AgreeOptions o = At(p, kSteps);
    o.labels = 10;
    ExpectAgree(MlpStep(), o);
  }
}

TEST(FromGraphTest, TransformerStepAgreesAtDefaultAndHighest) {
  for (Precision p : {Precision::kDefault, Precision::kHighest}) {
    ExpectAgree(TransformerStep(), At(p, kSteps));
  }
}

}  // namespace
}  // namespace tpuemu::engine::hlo
