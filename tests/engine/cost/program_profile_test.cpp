#include "engine/cost/program_profile.h"

#include <gtest/gtest.h>

#include "engine/cost/compare.h"
#include "engine/frontend/program_json.h"

namespace tpuemu::engine::cost {
namespace {

// A one-layer training step: x[64,128] · w[128,10], loss, and the weight gradient.
constexpr const char* kProgram = R"({
  "name": "dense",
  "ops": [
    {"id": "x", "op": "parameter", "shape": [64, 128]},
    {"id": "labels", "op": "parameter", "shape": [64], "dtype": "int32"},
    {"id": "w", "op": "parameter", "shape": [128, 10]},
    {"id": "y", "op": "dot", "inputs": ["x", "w"]},
    {"id": "loss", "op": "softmax_cross_entropy", "inputs": ["y", "labels"]},
    {"id": "dy", "op": "softmax_cross_entropy_grad", "inputs": ["y", "labels"]},
    {"id": "dw", "op": "dot", "inputs": ["x", "dy"], "transpose_lhs": true}
  ],
  "outputs": ["loss", "dw"]})";

TEST(ProgramProfile, FiguresFromAGraph) {
  Result<Graph> g = ParseProgram(kProgram);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  Result<ProgramFigures> f = FiguresFromGraph(*g);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->global_batch, 64);  // the first parameter's leading dimension
  EXPECT_DOUBLE_EQ(f->parameter_count, 1280);
  EXPECT_DOUBLE_EQ(f->parameter_bytes, 1280 * 4);
  EXPECT_DOUBLE_EQ(f->gradient_bytes, 1280 * 4);  // dw is shaped like w
  ASSERT_EQ(f->instructions.size(), 4u);
  EXPECT_TRUE(f->instructions[0].on_mxu);
  EXPECT_DOUBLE_EQ(f->instructions[0].flops, 2.0 * 64 * 128 * 10);
  for (const InstructionCost& in : f->instructions) EXPECT_TRUE(in.carries_batch) << in.name;

  const StepProfile p = ProfileFromFigures(*f);
  EXPECT_TRUE(p.training);
  EXPECT_EQ(p.units_per_step, 64);
  EXPECT_DOUBLE_EQ(p.model_flops, 2 * 2.0 * 64 * 128 * 10);
  EXPECT_EQ(p.ops[0].batch_dim, GemmDim::kM);  // y = x·w: the batch is M
  EXPECT_EQ(p.ops[3].batch_dim, GemmDim::kK);  // dw = xᵀ·dy: the batch is contracted
}

TEST(ProgramProfile, AProgramComparesOnEveryGeneration) {
  Result<Graph> g = ParseProgram(kProgram);
  ASSERT_TRUE(g.ok());
  const StepProfile p = ProfileFromFigures(FiguresFromGraph(*g).value());
  CompareOptions o;
  o.candidates = {"v5litepod-1", "v5litepod-128", "v4-8"};
  Result<Comparison> c = Compare(p, o);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_EQ(c->rows.size(), 3u);
  EXPECT_TRUE(c->rows[0].best.fits);
  // 128 chips cannot split a batch of 64.
  EXPECT_FALSE(c->rows[2].best.feasible);
  EXPECT_NE(c->rows[2].best.problem.find("batch of 64"), std::string::npos);
  o.remat = Remat::kFull;
  EXPECT_EQ(Compare(p, o).status().message(), "remat applies to model shapes only");
}

}  // namespace
}  // namespace tpuemu::engine::cost
