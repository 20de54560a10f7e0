#include "engine/frontend/compiler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/chip/chip_model.h"
#include "engine/frontend/graph_program.h"
#include "engine/hlo/cost_model.h"
#include "engine/kernels/gemm.h"

namespace tpuemu::engine {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

Slice MustSlice(const char* name) {
  auto s = Slice::FromAcceleratorType(name);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return *s;
}

Graph Mlp(int64_t batch = 64) {
  Graph g("mlp");
  g.Parameter("x", {batch, 128});
  g.Constant("w", {128, 256}, Init::Random(1));
  g.Dot("h", "x", "w");
  g.Relu("r", "h");
  g.Constant("w2", {256, 10}, Init::Random(2));
  g.Dot("logits", "r", "w2");
  g.MarkOutput("logits");
  EXPECT_TRUE(g.status().ok()) << g.status().ToString();
  return g;
}

TEST(CompilerTest, PlansMatmulsOnTheMxuWithTimingModelCosts) {
  const Slice slice = MustSlice("v4-8");
  for (Precision p : {Precision::kDefault, Precision::kHighest}) {
    CompileOptions options;
    options.precision = p;
    auto program = Compile(Mlp(), slice, options);
    ASSERT_TRUE(program.ok()) << program.status().ToString();
    const auto& plans = (*program)->plans;
    ASSERT_EQ(plans.size(), 6u);
    const OpPlan& h = plans[2];
    EXPECT_TRUE(h.on_mxu);
    EXPECT_EQ(h.gemm, (GemmShape{64, 256, 128}));
    const OpCost expected = DotCost(slice.spec(), 1, {64, 256, 128}, MxuPasses(p), 4, 1);
    EXPECT_EQ(h.cost.cycles, std::max(MxuCycles(expected.compute_cycles, TimingMode::kTpu),
                                      HbmCycles(slice.spec(), expected.hbm_bytes, 1)));
    EXPECT_EQ(h.cost.folds, expected.folds);
    EXPECT_GT(h.cost.folds, 0);
    EXPECT_EQ((*program)->gemm_kernel, GemmKernelName());  // for the job's compile line
    EXPECT_FALSE(plans[3].on_mxu);                         // relu on the vector unit
    EXPECT_GT(plans[3].cost.cycles, 0);
    int64_t sum = 0;
    double flops = 0;
    for (const auto& plan : plans) {
      sum += plan.cost.cycles;
      flops += plan.cost.flops;
    }
    EXPECT_EQ((*program)->totals.cycles, sum);
    EXPECT_DOUBLE_EQ(h.cost.flops, 2.0 * 64 * 128 * 256);
    EXPECT_DOUBLE_EQ(plans[5].cost.flops, 2.0 * 64 * 256 * 10);
    EXPECT_DOUBLE_EQ((*program)->totals.flops, flops);
    EXPECT_GT((*program)->totals.mxu_utilization, 0);
    EXPECT_LE((*program)->totals.mxu_utilization, 1);
    EXPECT_NEAR((*program)->totals.seconds, sum / slice.spec().clock_hz, 1e-12);
  }
}

TEST(CompilerTest, HighestCostsSixPassesOfDefault) {
  const Slice slice = MustSlice("v4-8");
  CompileOptions def, hi;
  hi.precision = Precision::kHighest;
  auto a = Compile(Mlp(1024), slice, def);
  auto b = Compile(Mlp(1024), slice, hi);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ((*b)->plans[2].cost.folds, 6 * (*a)->plans[2].cost.folds);
  EXPECT_GT((*b)->totals.cycles, (*a)->totals.cycles);
}

TEST(CompilerTest, Bf16AtDefaultMovesHalfTheBytes) {
  const Slice slice = MustSlice("v4-8");
  auto build = [](DType dt) {
    Graph g;
    g.Parameter("a", {2048, 2048}, dt);
    g.Parameter("b", {2048, 2048}, dt);
    g.Dot("c", "a", "b");
    g.MarkOutput("c");
    return g;
  };
  auto f = Compile(build(DType::kF32), slice, {});
  auto h = Compile(build(DType::kBF16), slice, {});
  ASSERT_TRUE(f.ok() && h.ok());
  EXPECT_DOUBLE_EQ((*h)->plans[2].cost.hbm_bytes * 2, (*f)->plans[2].cost.hbm_bytes);
}

TEST(CompilerTest, PeakLiveBytesFollowLiveness) {
  Graph g;
  g.Parameter("x", {1024});  // lives all program
  g.Relu("a", "x");
  g.Relu("b", "a");     // a dies here
  g.Relu("c", "b");     // b dies here
  g.Relu("dead", "x");  // read by nobody: lives only at its own step
  g.MarkOutput("c");
  ASSERT_TRUE(g.status().ok());
  auto program = Compile(g, MustSlice("v4-8"), {});
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  // The plan is the lowered module's: each relu is max(x, broadcast(0)), and a and b fuse into
  // their readers (never written to HBM). At "dead": x, c (an output) and dead are live, 3 · 4 KiB,
  // beside the four f32[] zero constants (16 bytes) that live throughout.
  EXPECT_EQ((*program)->peak_hbm_bytes_per_tensorcore, 3 * 4096 + 16);
  EXPECT_EQ((*program)->plans[(*program)->peak_op_index].id, "dead");
  EXPECT_EQ((*program)->plans[1].last_use, 2);
  EXPECT_EQ((*program)->plans[0].last_use, 5);
  EXPECT_EQ((*program)->plans[3].last_use, 5);  // output
  EXPECT_EQ((*program)->plans[4].last_use, 4);

  CompileOptions two;
  two.tensorcores = 2;
  auto sharded = Compile(g, MustSlice("v4-8"), two);
  ASSERT_TRUE(sharded.ok());
  EXPECT_EQ((*sharded)->peak_hbm_bytes_per_tensorcore, 3 * 2048 + 8);
}

TEST(CompilerTest, OutOfHbmIsResourceExhaustedWithXlaText) {
  Graph g("big");
  g.Parameter("huge", {65536, 70000});  // 17.09 GiB of f32 on a 16 GiB v5e TensorCore
  g.Parameter("small", {1024, 1024});
  g.Relu("r", "small");
  g.MarkOutput("r");
  CompileOptions options;
  options.max_tensor_elements = int64_t{1} << 40;
  auto program = Compile(g, MustSlice("v5litepod-1"), options);
  ASSERT_FALSE(program.ok());
  EXPECT_EQ(program.status().code(), StatusCode::kResourceExhausted);
  EXPECT_THAT(program.status().message(),
              StartsWith("XLA:TPU compile permanent error. Ran out of memory in memory space hbm. "
                         "Used 17.10G of 16.00G hbm. Exceeded hbm capacity by 1.10G."));
  EXPECT_THAT(program.status().message(), HasSubstr("'huge' f32[65536,70000] 17.09G"));

  // The same program split over a v4's 2 TensorCores per chip... still per-TC budget: 16 GiB.
  auto v4 = Compile(g, MustSlice("v4-8"), options);
  EXPECT_EQ(v4.status().code(), StatusCode::kResourceExhausted);
  options.tensorcores = 2;
  auto v4_split = Compile(g, MustSlice("v4-8"), options);
  EXPECT_TRUE(v4_split.ok()) << v4_split.status().ToString();
}

TEST(CompilerTest, RejectsBadOptionsAndOversizedTensors) {
  CompileOptions options;
  options.tensorcores = 9;
  auto a = Compile(Mlp(), MustSlice("v4-8"), options);
  EXPECT_EQ(a.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(a.status().message(), HasSubstr("tensorcores must be in [1, 8] for v4-8"));
  options = {};
  options.max_tensor_elements = 10000;
  auto b = Compile(Mlp(), MustSlice("v4-8"), options);
  EXPECT_EQ(b.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(b.status().message(),
              HasSubstr("constant \"w\": shape [128,256] exceeds the limit of 10000"));
  Graph broken;
  broken.Relu("r", "nothing");
  EXPECT_EQ(Compile(broken, MustSlice("v4-8"), {}).status().code(), StatusCode::kInvalidArgument);
  Graph no_outputs;
  no_outputs.Parameter("x", {2});
  EXPECT_THAT(Compile(no_outputs, MustSlice("v4-8"), {}).status().message(),
              HasSubstr("no outputs"));
}

TEST(CompilerTest, MultiCoreSplitsAndPicksTheCheaperPlan) {
  const Slice slice = MustSlice("v4-8");
  CompileOptions options;
  options.tensorcores = 4;
  auto program = Compile(Mlp(4096), slice, options);
  ASSERT_TRUE(program.ok());
  const OpPlan& h = (*program)->plans[2];
  EXPECT_EQ(h.split, SplitKind::kRows);
  EXPECT_EQ(h.cost.tensorcores_used, 4);
  auto one = Compile(Mlp(4096), slice, {});
  ASSERT_TRUE(one.ok());
  EXPECT_LT(h.cost.cycles, (*one)->plans[2].cost.cycles);

  // A weight gradient: K (the batch) is long, M·N small: split K and all-reduce.
  Graph g;
  g.Parameter("x", {65536, 128});
  g.Parameter("dy", {65536, 128});
  g.Dot("dw", "x", "dy", /*transpose_lhs=*/true);
  g.MarkOutput("dw");
  auto grad = Compile(g, slice, options);
  ASSERT_TRUE(grad.ok()) << grad.status().ToString();
  const OpPlan& dw = (*grad)->plans[2];
  EXPECT_EQ(dw.gemm, (GemmShape{128, 128, 65536}));
  EXPECT_EQ(dw.split, SplitKind::kContraction);
  EXPECT_GT(dw.cost.collective_cycles, 0);
  const OpCost rows = DotCost(slice.spec(), 1, dw.gemm, 1, 4, 4);
  EXPECT_LT(dw.cost.cycles, rows.cycles);
}

TEST(CompilerTest, ConvLowersToIm2colGemm) {
  Graph g;
  g.Parameter("x", {8, 32, 32, 16});
  g.Parameter("f", {3, 3, 16, 64});
  g.Conv2D("c", "x", "f", {1, 1, ConvPadding::kSame, {}});
  g.Conv2DBackpropFilter("df", "x", {3, 3, 16, 64}, "c", {1, 1, ConvPadding::kSame, {}});
  g.Conv2DBackpropInput("dx", {8, 32, 32, 16}, "f", "c", {1, 1, ConvPadding::kSame, {}});
  g.MarkOutput("df");
  g.MarkOutput("dx");
  ASSERT_TRUE(g.status().ok()) << g.status().ToString();
  auto program = Compile(g, MustSlice("v5litepod-4"), {});
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  EXPECT_EQ((*program)->plans[2].gemm, (GemmShape{8 * 32 * 32, 64, 144}));
  EXPECT_EQ((*program)->plans[3].gemm, (GemmShape{144, 64, 8 * 32 * 32}));
  // XLA writes the input gradient as a convolution of dy with the flipped filter: a 3x3 window
  // over cout = 64 channels into cin = 16, the same FLOPs as dy · filterᵀ then col2im.
  EXPECT_EQ((*program)->plans[4].gemm, (GemmShape{8 * 32 * 32, 16, 9 * 64}));
  for (int i = 2; i < 5; ++i) EXPECT_TRUE((*program)->plans[static_cast<size_t>(i)].on_mxu);
}

// One cost model: a graph's price is its lowered module's (engine/hlo/cost_model.h), each
// instruction's row landing on the graph op it was lowered from.
TEST(CompilerTest, PricesItsLoweredModuleWithTheHloCostModel) {
  const Slice slice = MustSlice("v4-8");
  for (int tensorcores : {1, 4}) {
    CompileOptions options;
    options.tensorcores = tensorcores;
    options.precision = Precision::kHigh;
    auto program = Compile(Mlp(512), slice, options);
    ASSERT_TRUE(program.ok()) << program.status().ToString();
    hlo::CostOptions cost;
    cost.precision = Precision::kHigh;
    cost.tensorcores = tensorcores;
    auto priced = hlo::PriceModule((*program)->lowered->module(), slice, cost);
    ASSERT_TRUE(priced.ok()) << priced.status().ToString();
    EXPECT_EQ((*program)->totals.cycles, priced->cycles);
    EXPECT_DOUBLE_EQ((*program)->totals.flops, priced->flops);
    EXPECT_EQ((*program)->peak_hbm_bytes_per_tensorcore, priced->peak_hbm_bytes_per_tensorcore);
    int64_t summed = 0;
    double flops = 0;
    for (const OpPlan& plan : (*program)->plans) {
      summed += plan.cost.cycles;
      flops += plan.cost.flops;
    }
    EXPECT_EQ(summed, priced->cycles);  // every priced instruction belongs to an op
    EXPECT_DOUBLE_EQ(flops, priced->flops);
  }
}

TEST(CompilerTest, StructureKeyIgnoresConstantDataButNotShapes) {
  Graph a("p"), b("p"), c("p");
  a.Constant("w", {4, 4}, Init::Random(1));
  b.Constant("w", {4, 4}, Init::Random(99, Init::Distribution::kUniform, 3));
  c.Constant("w", {4, 5}, Init::Random(1));
  for (Graph* g : {&a, &b, &c}) g->MarkOutput("w");
  EXPECT_EQ(StructureKey(a), StructureKey(b));
  EXPECT_NE(StructureKey(a), StructureKey(c));
  EXPECT_NE(HashKey(StructureKey(a)), HashKey(StructureKey(c)));
}

}  // namespace
}  // namespace tpuemu::engine
