#include "engine/frontend/ir.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tpuemu::engine {
namespace {

using ::testing::HasSubstr;

TEST(IrTest, BuilderInfersShapesAndDtypes) {
  Graph g("mlp");
  auto x = g.Parameter("x", {64, 128});
  auto w = g.Constant("w", {128, 10}, Init::Random(1, Init::Distribution::kNormal, 0.02));
  auto y = g.Dot("logits", x, w);
  auto r = g.Relu("r", y);
  g.MarkOutput(r);
  ASSERT_TRUE(g.status().ok()) << g.status().ToString();
  ASSERT_EQ(g.ops().size(), 4u);
  EXPECT_EQ(g.Find("logits")->shape, (Shape{64, 10}));
  EXPECT_EQ(g.Find("r")->dtype, DType::kF32);
  EXPECT_EQ(g.outputs(), std::vector<std::string>{"r"});
  EXPECT_EQ(g.IndexOf("w"), 1);
  EXPECT_EQ(g.Find("nope"), nullptr);
}

TEST(IrTest, DotShapeErrorNamesOpAndShapes) {
  Graph g;
  g.Parameter("x", {64, 128});
  g.Parameter("w", {256, 10});
  g.Dot("logits", "x", "w");
  EXPECT_EQ(g.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(g.status().message(),
            "dot \"logits\": contracting dimension sizes differ: f32[64,128] dim 1 is 128, "
            "f32[256,10] dim 0 is 256");
}

TEST(IrTest, StickyErrorKeepsFirstFailure) {
  Graph g;
  g.Parameter("x", {4, 4});
  g.Relu("r", "missing");
  g.Relu("s", "also_missing");
  EXPECT_THAT(g.status().message(), HasSubstr("'missing'"));
  EXPECT_EQ(g.ops().size(), 1u);
}

TEST(IrTest, DotTransposeAndBatchForms) {
  Graph g;
  g.Parameter("a", {8, 16, 32});
  g.Parameter("b", {8, 32, 4});
  g.Parameter("w", {32, 4});
  g.Parameter("wt", {4, 32});
  g.Parameter("at", {32, 16});
  g.Dot("bb", "a", "b");
  g.Dot("bw", "a", "w");
  g.Dot("bwt", "a", "wt", false, true);
  g.Dot("tl", "at", "w", true, false);
  ASSERT_TRUE(g.status().ok()) << g.status().ToString();
  EXPECT_EQ(g.Find("bb")->shape, (Shape{8, 16, 4}));
  EXPECT_EQ(g.Find("bw")->shape, (Shape{8, 16, 4}));
  EXPECT_EQ(g.Find("bwt")->shape, (Shape{8, 16, 4}));
  EXPECT_EQ(g.Find("tl")->shape, (Shape{16, 4}));
  Graph bad;
  bad.Parameter("a", {8, 16, 32});
  bad.Parameter("b", {4, 32, 4});
  bad.Dot("d", "a", "b");
  EXPECT_THAT(bad.status().message(), HasSubstr("batch dims differ: f32[8,16,32] vs f32[4,32,4]"));
}

TEST(IrTest, ConvShapes) {
  Graph g;
  g.Parameter("x", {2, 9, 9, 3});
  g.Parameter("f", {3, 3, 3, 8});
  g.Conv2D("valid", "x", "f", {2, 2, ConvPadding::kValid, {}});
  g.Conv2D("same", "x", "f", {2, 2, ConvPadding::kSame, {}});
  g.Conv2D("explicit", "x", "f", {1, 1, ConvPadding::kExplicit, {1, 1, 0, 2}});
  ASSERT_TRUE(g.status().ok()) << g.status().ToString();
  EXPECT_EQ(g.Find("valid")->shape, (Shape{2, 4, 4, 8}));
  EXPECT_EQ(g.Find("same")->shape, (Shape{2, 5, 5, 8}));
  EXPECT_EQ(g.Find("explicit")->shape, (Shape{2, 9, 9, 8}));
  g.Conv2DBackpropInput("dx", {2, 9, 9, 3}, "f", "same", {2, 2, ConvPadding::kSame, {}});
  g.Conv2DBackpropFilter("df", "x", {3, 3, 3, 8}, "same", {2, 2, ConvPadding::kSame, {}});
  ASSERT_TRUE(g.status().ok()) << g.status().ToString();
  EXPECT_EQ(g.Find("dx")->shape, (Shape{2, 9, 9, 3}));
  EXPECT_EQ(g.Find("df")->shape, (Shape{3, 3, 3, 8}));
  g.Conv2DBackpropFilter("bad", "x", {3, 3, 3, 8}, "valid", {2, 2, ConvPadding::kSame, {}});
  EXPECT_THAT(g.status().message(), HasSubstr("conv2d_backprop_filter \"bad\": dy f32[2,4,4,8]"));

  Graph c;
  c.Parameter("x", {1, 4, 4, 3});
  c.Parameter("f", {3, 3, 2, 8});
  c.Conv2D("conv", "x", "f");
  EXPECT_THAT(c.status().message(),
              HasSubstr("conv2d \"conv\": feature dims do not match: input features 3, "
                        "kernel 2 in x 8 out"));
}

TEST(IrTest, BroadcastReduceReshapeTransposeConcatSlice) {
  Graph g;
  g.Parameter("x", {4, 1, 3});
  g.Parameter("b", {3});
  g.Add("sum", "x", "b");
  g.Broadcast("np", "b", {2, 4, 3});
  g.Broadcast("ex", "b", {3, 5}, std::vector<int64_t>{0});
  g.Reduce("r", "x", ReduceKind::kSum, {0, 2});
  g.Reduce("rk", "x", ReduceKind::kMean, {-1}, true);
  g.Reduce("all", "x", ReduceKind::kMax);
  g.Reshape("rs", "x", {-1, 6});
  g.Transpose("t", "x", {2, 0, 1});
  g.Concat("c", {"x", "x"}, 1);
  g.Slice("s", "x", {1, 0, 1}, {3, 1, 3});
  ASSERT_TRUE(g.status().ok()) << g.status().ToString();
  EXPECT_EQ(g.Find("sum")->shape, (Shape{4, 1, 3}));
  EXPECT_EQ(g.Find("np")->shape, (Shape{2, 4, 3}));
  EXPECT_EQ(g.Find("ex")->shape, (Shape{3, 5}));
  EXPECT_EQ(g.Find("r")->shape, (Shape{1}));
  EXPECT_EQ(g.Find("rk")->shape, (Shape{4, 1, 1}));
  EXPECT_EQ(g.Find("all")->shape, (Shape{}));
  EXPECT_EQ(g.Find("rs")->shape, (Shape{2, 6}));
  EXPECT_EQ(g.Find("t")->shape, (Shape{3, 4, 1}));
  EXPECT_EQ(g.Find("c")->shape, (Shape{4, 2, 3}));
  EXPECT_EQ(g.Find("s")->shape, (Shape{2, 1, 2}));

  Graph bad;
  bad.Parameter("x", {4, 3});
  bad.Parameter("y", {5, 3});
  bad.Add("a", "x", "y");
  EXPECT_EQ(bad.status().message(), "add \"a\": shapes do not broadcast: f32[4,3] vs f32[5,3]");
}

TEST(IrTest, DtypeRules) {
  Graph g;
  g.Parameter("x", {4, 3});
  g.Parameter("h", {4, 3}, DType::kBF16);
  g.Parameter("labels", {4}, DType::kI32);
  g.SoftmaxCrossEntropy("loss", "x", "labels");
  g.SoftmaxCrossEntropyGrad("dloss", "x", "labels");
  g.Convert("hf", "h", DType::kF32);
  g.Add("ok", "x", "hf");
  ASSERT_TRUE(g.status().ok()) << g.status().ToString();
  EXPECT_EQ(g.Find("loss")->shape, Shape{});
  EXPECT_EQ(g.Find("dloss")->shape, (Shape{4, 3}));
  g.Add("mixed", "x", "h");
  EXPECT_THAT(g.status().message(), HasSubstr("dtypes differ: f32[4,3] vs bf16[4,3]"));
  Graph i;
  i.Parameter("labels", {4}, DType::kI32);
  i.Relu("r", "labels");
  EXPECT_THAT(i.status().message(), HasSubstr("requires a floating-point operand, got int32[4]"));
}

TEST(IrTest, AddRejectsDuplicatesAndBadAttrs) {
  Graph g;
  g.Parameter("x", {2, 3});
  Op dup;
  dup.id = "x";
  dup.kind = OpKind::kRelu;
  dup.inputs = {"x"};
  EXPECT_THAT(g.Add(dup).message(), HasSubstr("duplicate op id"));
  Op perm;
  perm.id = "t";
  perm.kind = OpKind::kTranspose;
  perm.inputs = {"x"};
  perm.attrs.perm = {0, 0};
  // The HLO transpose's rule, in the verifier's words, names the op.
  EXPECT_EQ(g.Add(perm).message(),
            "transpose \"t\": dimensions={0,0} is not a permutation of f32[2,3]");
  perm.attrs.perm = {0, 5};
  EXPECT_THAT(g.Add(perm).message(), HasSubstr("is not a permutation of f32[2,3]"));
  Op slice;
  slice.id = "s";
  slice.kind = OpKind::kSlice;
  slice.inputs = {"x"};
  slice.attrs.start = {0, 1};
  slice.attrs.limit = {2, 4};
  EXPECT_EQ(g.Add(slice).message(),
            "slice \"s\": slice range [1:4:1] is outside dimension 1 of f32[2,3]");
  slice.attrs.limit = {2};
  EXPECT_THAT(g.Add(slice).message(), HasSubstr("start [0,1] and limit [2] need one entry"));
  Op concat;
  concat.id = "cat";
  concat.kind = OpKind::kConcat;
  concat.inputs = {"x", "x"};
  concat.attrs.axis = 2;
  EXPECT_THAT(g.Add(concat).message(), HasSubstr("axis 2 out of range for rank 2"));
  Op neg;
  neg.id = "c";
  neg.kind = OpKind::kConstant;
  neg.attrs.shape = {2, -3};
  neg.attrs.init = Init::Fill(0);
  EXPECT_THAT(g.Add(neg).message(), HasSubstr("negative dimension"));
  Op values;
  values.id = "v";
  values.kind = OpKind::kConstant;
  values.attrs.shape = {2, 2};
  values.attrs.init = Init::Values({1, 2, 3});
  EXPECT_THAT(g.Add(values).message(), HasSubstr("got 3 values for shape f32[2,2]"));
  EXPECT_EQ(g.ops().size(), 1u);
  EXPECT_THAT(g.AddOutput("zzz").message(), HasSubstr("'zzz'"));
}

// An op's shape is the shape of the HLO it lowers to; one too large to count is refused.
TEST(IrTest, ShapeComesFromTheLoweredHlo) {
  Graph g;
  g.Parameter("x", {2, 3, 4});
  g.Parameter("w", {4, 5}, DType::kBF16);
  g.Convert("xb", "x", DType::kBF16);
  g.Dot("y", "xb", "w");
  g.Reduce("r", "y", ReduceKind::kMean, {-1, 0}, /*keep_dims=*/true);
  g.Reshape("flat", "y", {-1, 5});
  g.Concat("both", {"flat", "flat"}, -2);
  ASSERT_TRUE(g.status().ok()) << g.status().ToString();
  EXPECT_EQ(ShapeString(g.Find("y")->dtype, g.Find("y")->shape), "bf16[2,3,5]");
  EXPECT_EQ(g.Find("r")->shape, (Shape{1, 3, 1}));
  EXPECT_EQ(g.Find("flat")->shape, (Shape{6, 5}));
  EXPECT_EQ(g.Find("flat")->attrs.shape, (Shape{6, 5}));  // the -1 resolved
  EXPECT_EQ(g.Find("both")->shape, (Shape{12, 5}));

  Graph huge;
  huge.Parameter("a", {int64_t{1} << 30, 1});
  huge.Parameter("b", {1, int64_t{1} << 30});
  huge.Dot("ab", "a", "b");
  EXPECT_THAT(huge.status().message(), HasSubstr("dot \"ab\": result"));
}

TEST(IrTest, AutoIdsAndOpNames) {
  Graph g;
  auto x = g.Parameter("", {2});
  auto y = g.Relu("", x);
  EXPECT_NE(x, y);
  EXPECT_TRUE(g.status().ok());
  EXPECT_EQ(*ParseOpKind("softmax_cross_entropy_grad"), OpKind::kSoftmaxCrossEntropyGrad);
  auto bad = ParseOpKind("matmul");
  EXPECT_THAT(bad.status().message(), HasSubstr("unknown op 'matmul'; known ops: add, broadcast"));
  for (const char* name : {"dot", "conv2d", "reduce", "gelu_grad", "slice", "constant"}) {
    auto k = ParseOpKind(name);
    ASSERT_TRUE(k.ok()) << name;
    EXPECT_EQ(OpKindName(*k), name);
  }
}

}  // namespace
}  // namespace tpuemu::engine
