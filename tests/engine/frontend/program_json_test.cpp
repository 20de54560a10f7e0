#include "engine/frontend/program_json.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tpuemu::engine {
namespace {

using ::testing::HasSubstr;

constexpr const char* kMlp = R"({
  "name": "mlp",
  "ops": [
    {"id": "x", "op": "parameter", "shape": [64, 128], "dtype": "f32"},
    {"id": "labels", "op": "parameter", "shape": [64], "dtype": "int32", "fill": 3},
    {"id": "w", "op": "constant", "shape": [128, 10],
     "random": {"seed": 1, "distribution": "normal", "scale": 0.02}},
    {"id": "b", "op": "constant", "shape": [10], "fill": 0.1},
    {"id": "y", "op": "dot", "inputs": ["x", "w"]},
    {"id": "z", "op": "add", "inputs": ["y", "b"]},
    {"id": "r", "op": "relu", "inputs": ["z"]},
    {"id": "s", "op": "reduce", "inputs": ["r"], "reduce": "mean", "axes": [1], "keep_dims": true},
    {"id": "loss", "op": "softmax_cross_entropy", "inputs": ["r", "labels"]}
  ],
  "outputs": ["r", "loss"]
})";

TEST(ProgramJsonTest, ParsesTheDocumentedExample) {
  auto g = ParseProgram(kMlp);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(g->name(), "mlp");
  ASSERT_EQ(g->ops().size(), 9u);
  EXPECT_EQ(g->Find("r")->shape, (Shape{64, 10}));
  EXPECT_EQ(g->Find("s")->shape, (Shape{64, 1}));
  EXPECT_EQ(g->Find("labels")->dtype, DType::kI32);
  const Init& init = g->Find("w")->attrs.init;
  EXPECT_EQ(init.kind, Init::Kind::kRandom);
  EXPECT_EQ(init.seed, 1u);
  EXPECT_DOUBLE_EQ(init.scale, 0.02);
  EXPECT_EQ(g->outputs(), (std::vector<std::string>{"r", "loss"}));
}

TEST(ProgramJsonTest, RoundTripsEveryAttribute) {
  Graph g("all");
  g.Parameter("x", {2, 8, 8, 3}, DType::kBF16, Init::Random(5, Init::Distribution::kUniform, 2));
  g.Constant("f", {3, 3, 3, 4}, Init::Values(std::vector<double>(108, 0.5)), DType::kBF16);
  g.Conv2D("c", "x", "f", {2, 1, ConvPadding::kExplicit, {1, 0, 2, 1}});
  g.Reshape("m", "c", {-1, 4});
  g.Constant("w", {5, 4}, Init::Fill(1), DType::kBF16);
  g.Dot("d", "m", "w", false, true);
  g.Softmax("sm", "d", 0);
  g.Broadcast("bc", "sm", {2, 72, 5}, std::vector<int64_t>{1, 2});
  g.Transpose("t", "bc", {2, 1, 0});
  g.Slice("sl", "t", {0, 1, 0}, {5, 3, 2});
  g.Concat("cc", {"sl", "sl"}, 2);
  g.Reduce("r", "cc", ReduceKind::kMax, {0}, false);
  g.Convert("cv", "r", DType::kF32);
  g.MarkOutput("cv");
  ASSERT_TRUE(g.status().ok()) << g.status().ToString();
  const auto json = ProgramToJson(g);
  auto back = ParseProgram(json.dump());
  ASSERT_TRUE(back.ok()) << back.status().ToString() << "\n" << json.dump(2);
  EXPECT_EQ(ProgramToJson(*back), json);
  ASSERT_EQ(back->ops().size(), g.ops().size());
  for (size_t i = 0; i < g.ops().size(); ++i) {
    EXPECT_EQ(back->ops()[i].shape, g.ops()[i].shape) << g.ops()[i].id;
    EXPECT_EQ(back->ops()[i].dtype, g.ops()[i].dtype) << g.ops()[i].id;
  }
  EXPECT_EQ(back->Find("c")->attrs.conv.pads, (std::array<int64_t, 4>{1, 0, 2, 1}));
}

Status ParseError(const std::string& text, const ParseOptions& options = {}) {
  auto g = ParseProgram(text, options);
  return g.ok() ? Status::Ok() : g.status();
}

TEST(ProgramJsonTest, UnknownOpListsKnownOps) {
  Status s = ParseError(R"({"ops": [{"id": "a", "op": "matmul"}], "outputs": ["a"]})");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("op 'a' (#0): field 'op'"));
  EXPECT_THAT(s.message(), HasSubstr("known ops: add, broadcast, concat"));
}

TEST(ProgramJsonTest, FieldErrorsNameOpAndField) {
  EXPECT_THAT(
      ParseError(R"({"ops": [{"id": "x", "op": "parameter", "shape": "64"}], "outputs": ["x"]})")
          .message(),
      HasSubstr("op 'x' (#0): field 'shape' must be an array of integers"));
  EXPECT_THAT(
      ParseError(R"({"ops": [{"id": "x", "op": "parameter"}], "outputs": ["x"]})").message(),
      HasSubstr("op 'x' (#0): field 'shape' is required"));
  EXPECT_THAT(ParseError(R"({"ops": [{"id": "x", "op": "parameter", "shape": [2],
                                      "dtype": "f16"}], "outputs": ["x"]})")
                  .message(),
              HasSubstr("field 'dtype' is invalid: unknown dtype 'f16'"));
  EXPECT_THAT(ParseError(R"({"ops": [{"id": "x", "op": "parameter", "shape": [2],
                                      "random": {"seed": -1}}], "outputs": ["x"]})")
                  .message(),
              HasSubstr("field 'random.seed' must be an integer >= 0"));
  EXPECT_THAT(ParseError(R"({"ops": [{"id": "x", "op": "parameter", "shape": [2],
                                      "tranpose_lhs": true}], "outputs": ["x"]})")
                  .message(),
              HasSubstr("field 'tranpose_lhs' is unknown"));
  EXPECT_THAT(
      ParseError(R"({"ops": [{"op": "parameter", "shape": [2]}], "outputs": []})").message(),
      HasSubstr("op #0: field 'id' must be a non-empty string"));
  EXPECT_THAT(ParseError(R"({"ops": [{"id": "x", "op": "parameter", "shape": [2]}]})").message(),
              HasSubstr("'outputs'"));
  EXPECT_THAT(ParseError(R"({"ops": [{"id": "x", "op": "parameter", "shape": [2]}],
                             "outputs": ["y"]})")
                  .message(),
              HasSubstr("output 'y' does not name an op"));
  EXPECT_THAT(ParseError("{\"ops\": [").message(), HasSubstr("not valid JSON"));
  EXPECT_THAT(ParseError(R"({"ops": [{"id": "x", "op": "parameter", "shape": [64, 128]},
      {"id": "w", "op": "parameter", "shape": [256, 10]},
      {"id": "logits", "op": "dot", "inputs": ["x", "w"]}], "outputs": ["logits"]})")
                  .message(),
              HasSubstr("dot \"logits\": contracting dimension sizes differ: f32[64,128] dim 1 "
                        "is 128, f32[256,10] dim 0 is 256"));
}

TEST(ProgramJsonTest, LimitsAreEnforced) {
  ParseOptions options;
  options.max_ops = 3;
  std::string ops;
  for (int i = 0; i < 4; ++i) {
    ops += std::string(i ? "," : "") + R"({"id": "p)" + std::to_string(i) +
           R"(", "op": "parameter", "shape": [1]})";
  }
  EXPECT_THAT(ParseError(R"({"ops": [)" + ops + R"(], "outputs": ["p0"]})", options).message(),
              HasSubstr("4 ops exceed the limit of 3"));

  options = {};
  options.max_tensor_elements = 1000;
  EXPECT_THAT(ParseError(R"({"ops": [{"id": "x", "op": "parameter", "shape": [100, 11]}],
                             "outputs": ["x"]})",
                         options)
                  .message(),
              HasSubstr("exceeds the limit of 1000 elements"));
  // The limit also holds for results (a broadcast can blow a small input up).
  EXPECT_THAT(ParseError(R"({"ops": [{"id": "x", "op": "parameter", "shape": [10]},
      {"id": "b", "op": "reshape", "inputs": ["x"], "shape": [10, 1]},
      {"id": "c", "op": "broadcast", "inputs": ["b"], "shape": [10, 1000]}], "outputs": ["c"]})",
                         options)
                  .message(),
              HasSubstr("exceeds the limit"));
  // Overflowing element counts do not wrap around.
  EXPECT_EQ(ParseError(R"({"ops": [{"id": "x", "op": "parameter",
      "shape": [4294967296, 4294967296, 4294967296]}], "outputs": ["x"]})")
                .code(),
            StatusCode::kInvalidArgument);

  std::string deep(200, '[');
  deep += std::string(200, ']');
  EXPECT_THAT(ParseError(R"({"ops": )" + deep + "}").message(), HasSubstr("nests deeper than 64"));
  // Brackets inside strings do not count towards depth.
  std::string name(100, '[');
  auto ok = ParseProgram(R"({"name": ")" + name + R"(", "ops": [{"id": "x", "op": "parameter",
                             "shape": [1]}], "outputs": ["x"]})");
  EXPECT_TRUE(ok.ok()) << ok.status().ToString();
}

}  // namespace
}  // namespace tpuemu::engine
