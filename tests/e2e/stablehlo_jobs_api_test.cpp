// StableHLO jobs through real HTTP (issue 42): the job body's hlo.text takes a module as JAX
// prints it, runs it with the numbers the engine gives the lowered module on the same seed, and
// refuses what it cannot take (dynamic shapes, unknown ops, shardings needing other devices)
// with a 400 naming it and its line; GET .../hlo?dialect=stablehlo gives a job's module back as
// StableHLO.
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

// GET .../jobs/J/hlo?dialect=stablehlo prints the job's module as StableHLO
// (engine/stablehlo/printer.h); submitted back it runs to the same outputs and cycles.
TEST_F(StablehloJobsApiTest, HloOfAJobAsStableHloRunsTheSame) {
  CreateReady("tpu-a");
  const std::string text = engine::hlo::testing::Testdata("mlp_train_step.hlo");
  json first = Wait(SubmitHlo("tpu-a", {{"text", text}}, {{"seed", 5}})["name"]);
  ASSERT_EQ(first["state"], "SUCCEEDED") << first.dump().substr(0, 2000);
  const std::string name = first["name"];

  ClientResponse r = Call("GET", "/v2/" + name + "/hlo?dialect=stablehlo");
  ASSERT_EQ(r.status, 200) << r.body.substr(0, 2000);
  json job = r.Json()["job"];
  const std::string mlir = job["hlo"]["text"];
  EXPECT_THAT(mlir, ::testing::StartsWith("module @jit_mlp_train_step attributes "
                                          "{mhlo.num_partitions = 1 : i32"));
  EXPECT_THAT(mlir, HasSubstr("func.func public @main("));
  EXPECT_THAT(mlir, HasSubstr("\"stablehlo.while\""));
  // Without the parameter, and with dialect=hlo, the module is the text the job was given.
  EXPECT_EQ(Call("GET", "/v2/" + name + "/hlo").Json()["job"]["hlo"]["text"], text);
  EXPECT_EQ(Call("GET", "/v2/" + name + "/hlo?dialect=hlo").Json()["job"]["hlo"]["text"], text);
  ClientResponse bad = Call("GET", "/v2/" + name + "/hlo?dialect=mlir");
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(bad.Json()["error"]["status"], "INVALID_ARGUMENT");
  EXPECT_THAT(bad.Json()["error"]["message"].get<std::string>(), HasSubstr("dialect"));

  EXPECT_EQ(job["seed"], 5);
  json again = Wait(Submit("tpu-a", job.dump())["name"]);
  ASSERT_EQ(again["state"], "SUCCEEDED") << again.dump().substr(0, 2000);
  EXPECT_EQ(again["result"]["outputs"], first["result"]["outputs"]);
  EXPECT_EQ(again["result"]["metrics"]["cyclesPerStep"],
            first["result"]["metrics"]["cyclesPerStep"]);

  // A StableHLO job's module, printed by tpuemu, runs the same too.
  json jax = Wait(SubmitHlo("tpu-a", {{"text", Mlir("jax_mlp.mlir")}}, {{"seed", 3}})["name"]);
  ASSERT_EQ(jax["state"], "SUCCEEDED") << jax.dump().substr(0, 2000);
  ClientResponse jax_hlo =
      Call("GET", "/v2/" + jax["name"].get<std::string>() + "/hlo?dialect=stablehlo");
  ASSERT_EQ(jax_hlo.status, 200) << jax_hlo.body.substr(0, 2000);
  json jax_again = Wait(Submit("tpu-a", jax_hlo.Json()["job"].dump())["name"]);
  ASSERT_EQ(jax_again["state"], "SUCCEEDED") << jax_again.dump().substr(0, 2000);
  EXPECT_EQ(jax_again["result"]["outputs"], jax["result"]["outputs"]);
  EXPECT_EQ(jax_again["result"]["metrics"]["cyclesPerStep"],
            jax["result"]["metrics"]["cyclesPerStep"]);
}

}  // namespace
}  // namespace tpuemu::testing
