// StableHLO jobs through real HTTP (issue 42): the job body's hlo.text takes a module as JAX
// prints it, runs it with the numbers the engine gives the lowered module on the same seed, and
// refuses what it cannot take (dynamic shapes, unknown ops, shardings needing other devices)
// with a 400 naming it and its line.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/hlo/program.h"
#include "engine/stablehlo/import.h"
#include "tests/e2e/jobs_api_fixture.h"
#include "tests/engine/hlo/hlo_test_util.h"

namespace tpuemu::testing {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

// tests/engine/stablehlo/testdata/<name>
std::string Mlir(const std::string& name) {
  return engine::hlo::testing::Testdata("../../stablehlo/testdata/" + name);
}

class StablehloJobsApiTest : public JobsApiFixture {
 protected:
  json SubmitHlo(const std::string& node, json hlo, json extra = json::object(), int status = 200) {
    extra["hlo"] = std::move(hlo);
    return Submit(node, extra.dump(), status, kParent);
  }
};

TEST_F(StablehloJobsApiTest, JaxModuleRunsWithTheEnginesNumbers) {
  CreateReady("tpu-a");
  const std::string text = Mlir("jax_mlp.mlir");
  json job = SubmitHlo("tpu-a", {{"text", text}}, {{"seed", 11}});
  json done = Wait(job["name"]);
  ASSERT_EQ(done["state"], "SUCCEEDED") << done.dump().substr(0, 2000);
  Result<engine::hlo::Module> module = engine::stablehlo::ParseAnyModule(text);
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  engine::hlo::RunOptions options;
  options.inputs.seed = 11;
  Result<engine::hlo::RunResult> run =
      engine::hlo::RunModule(*module, engine::Slice::FromAcceleratorType("v4-8").value(), options);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  const engine::hlo::Array& want = *run->outputs[0].array;
  const json& out = done["result"]["outputs"]["out_0"];
  EXPECT_EQ(out["shape"], json(want.dims));
  double sum = 0;
  for (int64_t k = 0; k < want.size(); ++k) sum += want.GetDouble(k);
  EXPECT_DOUBLE_EQ(out["checksum"].get<double>(), sum);
  EXPECT_EQ(done["result"]["metrics"]["cyclesPerStep"], run->cost.cycles);

  // Two partitions from mhlo.num_partitions, the sharded arguments checked.
  json sharded = Wait(SubmitHlo("tpu-a", {{"text", Mlir("jax_sharded.mlir")}})["name"]);
  ASSERT_EQ(sharded["state"], "SUCCEEDED") << sharded.dump().substr(0, 2000);
  EXPECT_EQ(sharded["result"]["metrics"]["devices"], 2);
}

TEST_F(StablehloJobsApiTest, RefusalsAre400sNamingWhatAndWhere) {
  CreateReady("tpu-a");
  auto error = [&](const std::string& text) {
    json r = SubmitHlo("tpu-a", {{"text", text}}, json::object(), 400);
    EXPECT_EQ(r["error"]["status"], "INVALID_ARGUMENT") << r.dump();
    return r["error"]["message"].get<std::string>();
  };
  EXPECT_THAT(
      error("func.func @main(%a: tensor<?x4xf32>) -> tensor<?x4xf32> {\n"
            "  return %a : tensor<?x4xf32>\n}\n"),
      HasSubstr("hlo.text: StableHLO text line 1, column 21: dynamic shape tensor<?x4xf32>"));
  EXPECT_THAT(
      error("func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
            "  %0 = stablehlo.einsum %a, %a, config = \"a,a->a\" : (tensor<4xf32>, "
            "tensor<4xf32>) -> tensor<4xf32>\n  return %0 : tensor<4xf32>\n}\n"),
      HasSubstr(
          "StableHLO line 2, column 8: stablehlo.einsum: op stablehlo.einsum is not supported"));
  std::string bad = Mlir("jax_sharded.mlir");
  bad.replace(bad.find("mhlo.num_partitions = 2"), 23, "mhlo.num_partitions = 1");
  EXPECT_THAT(error(bad), HasSubstr("mhlo.sharding"));
}

}  // namespace
}  // namespace tpuemu::testing
