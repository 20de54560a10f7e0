// Modules in exactly the shape JAX prints them (jax.jit(f).lower(*args).as_text()): module
// attributes, a public @main calling private functions, jax.result_info, mhlo.layout_mode,
// and for several devices mhlo.sharding on the arguments.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "engine/hlo/program.h"
#include "engine/stablehlo/checks.h"
#include "engine/stablehlo/import.h"

namespace tpuemu::engine::stablehlo {
namespace {

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

const std::string kDir = std::string(TPUEMU_SOURCE_DIR) + "/tests/engine/stablehlo/testdata/";

TEST(StablehloJaxModule, InputsExpectedShapeRunsItsChecks) {
  const std::string text = Read(kDir + "jax_inputs_expected.mlir");
  ASSERT_FALSE(text.empty());
  Result<CheckReport> report = RunChecks(text);
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_TRUE(report->failures.empty()) << report->failures[0];
  EXPECT_EQ(report->passed, 1);
}

TEST(StablehloJaxModule, MlpRunsAndPricesLikeItsHloText) {
  const std::string text = Read(kDir + "jax_mlp.mlir");
  Result<hlo::Module> m = ParseAnyModule(text);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->name, "jit_mlp");
  EXPECT_EQ(m->devices(), 1);
  Result<hlo::RunResult> run = hlo::RunModule(*m, Slice(*FindAcceleratorType("v5litepod-1")), {});
  ASSERT_TRUE(run.ok()) << run.status().message();
  ASSERT_EQ(run->outputs.size(), 1u);
  EXPECT_FALSE(run->outputs[0].is_tuple);
  EXPECT_EQ(run->outputs[0].array->dims, (std::vector<int64_t>{8, 4}));
  EXPECT_GT(run->cost.flops, 0);
}

TEST(StablehloJaxModule, ShardedArgumentsSetTheDevicesAndAreChecked) {
  const std::string text = Read(kDir + "jax_sharded.mlir");
  Result<hlo::Module> m = ParseAnyModule(text);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->num_partitions, 2);
  EXPECT_EQ(m->devices(), 2);
  std::string bad = text;
  bad.replace(bad.find("mhlo.num_partitions = 2"), 23, "mhlo.num_partitions = 1");
  Result<hlo::Module> refused = ParseAnyModule(bad);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("mhlo.sharding"), std::string::npos)
      << refused.status().message();
}

}  // namespace
}  // namespace tpuemu::engine::stablehlo
