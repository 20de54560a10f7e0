// `tpuemu-engine estimate --hlo` and `tpuemu-engine run` through the real binary: the report's
// numbers are the engine's, outputs land in .npy files, and every bad argument is a one-line
// error naming the flag (exit code 2).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "engine/hlo/npy.h"
#include "engine/hlo/parser.h"
#include "engine/hlo/program.h"
#include "engine/stablehlo/import.h"
#include "tests/cli/tpuemu_engine/engine_cli.h"

namespace tpuemu::cli {
namespace {

using ::testing::HasSubstr;

std::string Data(const std::string& name) { return std::string(TPUEMU_HLO_TESTDATA) + "/" + name; }

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class TempDir {
 public:
  TempDir() {
    path_ = std::filesystem::temp_directory_path() /
            ("tpuemu_hlo_cli_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string path() const { return path_.string(); }
  std::string File(const std::string& name, const std::string& content) const {
    std::ofstream(path_ / name, std::ios::binary) << content;
    return (path_ / name).string();
  }

 private:
  std::filesystem::path path_;
};

TEST(EngineHlo, EstimateReportsTheCostModelsTotalsAndProfile) {
  const nlohmann::json j =
      RunJson("estimate --hlo " + Data("mlp_train_step.hlo") + " --accelerator-type v5p-8 --top 0");
  ASSERT_TRUE(j.is_object());
  auto slice = engine::Slice::FromAcceleratorType("v5p-8");
  ASSERT_TRUE(slice.ok());
  auto module = engine::hlo::ParseModule(ReadAll(Data("mlp_train_step.hlo")));
  ASSERT_TRUE(module.ok());
  auto want = engine::hlo::PriceModule(*module, *slice);
  ASSERT_TRUE(want.ok());
  EXPECT_EQ(j["mode"], "estimate");
  EXPECT_EQ(j["module"], "jit_mlp_train_step");
  EXPECT_EQ(j["accelerator_type"], "v5p-8");
  EXPECT_EQ(j["tensorcores_per_device"], 2);
  EXPECT_EQ(j["cycles"].get<int64_t>(), want->cycles);
  EXPECT_DOUBLE_EQ(j["flops"].get<double>(), want->flops);
  EXPECT_EQ(j["fits"], true);
  ASSERT_EQ(j["per_instruction"].size(), want->rows.size());
  bool found = false;
  for (const auto& row : j["per_instruction"]) {
    if (row["instruction"] == "%h_dot") {
      found = true;
      EXPECT_EQ(row["op_name"], "jit(train_step)/dense1/dot_general");
      EXPECT_EQ(row["count"], 3);
      EXPECT_EQ(row["unit"], "mxu");
    }
  }
  EXPECT_TRUE(found);
}

TEST(EngineHlo, EstimateTableListsTheTopInstructions) {
  const RunResult r = RunEngine("estimate --hlo " + Data("transformer_block.hlo") + " --top 3");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("module                             jit_transformer_block"));
  EXPECT_THAT(r.out, HasSubstr("per_instruction:"));
  EXPECT_THAT(r.out, HasSubstr("jit(block)/attn/q_proj"));
  size_t rows = 0;
  for (size_t p = r.out.find("per_instruction:"); (p = r.out.find("\n%", p)) != std::string::npos;
       ++p)
    ++rows;
  EXPECT_EQ(rows, 3u);
}

TEST(EngineHlo, RunWritesOutputsAndMatchesTheEngine) {
  TempDir dir;
  const RunResult r = RunEngine("run --hlo " + Data("cnn_step.hlo") + " --seed 5 --output-dir " +
                                dir.path() + " --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["mode"], "run");
  EXPECT_EQ(j["outputs"].size(), 3u);
  EXPECT_EQ(j["outputs"][1]["shape"], "f32[2,2,1,2]");
  auto slice = engine::Slice::FromAcceleratorType("v4-8");
  engine::hlo::RunOptions options;
  options.inputs.seed = 5;
  auto module = engine::hlo::ParseModule(ReadAll(Data("cnn_step.hlo")));
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  auto want = engine::hlo::RunModule(*module, *slice, options);
  ASSERT_TRUE(want.ok()) << want.status().ToString();
  for (int leaf = 0; leaf < 3; ++leaf) {
    const engine::hlo::Array& expected =
        *want->outputs[0].elements[static_cast<size_t>(leaf)].array;
    auto got = engine::hlo::ReadNpy(ReadAll(dir.path() + "/out_" + std::to_string(leaf) + ".npy"),
                                    expected.shape(), "out");
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(got->f, expected.f);
  }
  EXPECT_EQ(j["cycles"].get<int64_t>(), want->cost.cycles);
}

TEST(EngineHlo, RunOnFourDevicesWithValuesAndNpyParameters) {
  TempDir dir;
  const RunResult r = RunEngine("run --hlo " + Data("data_parallel_step.hlo") +
                                " --value 0=0.5,-0.25,1 --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["outputs"].size(), 4u);
  EXPECT_EQ(j["outputs"][3]["device"], 3);
  EXPECT_EQ(j["outputs"][0]["first"], j["outputs"][3]["first"]);
  engine::hlo::Array w = engine::hlo::Array::Zeros(engine::hlo::PrimitiveType::kF32, {3});
  w.f = {0.5f, -0.25f, 1.0f};
  dir.File("0.npy", engine::hlo::WriteNpy(w));
  const RunResult from_files = RunEngine("run --hlo " + Data("data_parallel_step.hlo") +
                                         " --params " + dir.path() + " --format json");
  ASSERT_EQ(from_files.exit_code, 0) << from_files.err;
  EXPECT_EQ(nlohmann::json::parse(from_files.out)["outputs"], j["outputs"]);
}

// StableHLO as JAX prints it (docs/stablehlo.md): the same flag, outputs as .npy files, equal to
// the engine's run of the lowered module; a syntax error names its line and column.
TEST(EngineHlo, RunTakesStableHloAndWritesNpy) {
  TempDir dir;
  const std::string mlir = Data("../../stablehlo/testdata/jax_mlp.mlir");
  const RunResult r = RunEngine("run --hlo " + mlir +
                                " --seed 3 --accelerator-type v5litepod-1"
                                " --output-dir " +
                                dir.path() + " --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["module"], "jit_mlp");
  ASSERT_EQ(j["outputs"].size(), 1u);
  EXPECT_EQ(j["outputs"][0]["shape"], "f32[8,4]");
  auto module = engine::stablehlo::ParseAnyModule(ReadAll(mlir));
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  engine::hlo::RunOptions options;
  options.inputs.seed = 3;
  auto want = engine::hlo::RunModule(
      *module, engine::Slice(*engine::FindAcceleratorType("v5litepod-1")), options);
  ASSERT_TRUE(want.ok()) << want.status().ToString();
  const engine::hlo::Array& expected = *want->outputs[0].array;
  auto got = engine::hlo::ReadNpy(ReadAll(dir.path() + "/out_0.npy"), expected.shape(), "out");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->f, expected.f);
  const std::string bad = dir.File("bad.mlir",
                                   "module {\n  func.func @main() {\n    %0 = stablehlo.constant "
                                   "dense<1.0 : tensor<f32>\n  }\n}\n");
  const RunResult e = RunEngine("estimate --hlo " + bad);
  EXPECT_NE(e.exit_code, 0);
  EXPECT_THAT(e.err, HasSubstr("StableHLO text line 3, column"));
}

TEST(EngineHlo, UnsupportedInstructionsNeedAllowUnsupported) {
  TempDir dir;
  const std::string file = dir.File("cc.hlo", R"(HloModule m
ENTRY e {
  x = f32[64,64] parameter(0)
  ROOT c = f32[64,64] custom-call(x), custom_call_target="tpu_custom_call"
})");
  const RunResult strict = RunEngine("estimate --hlo " + file);
  EXPECT_EQ(strict.exit_code, 2);
  EXPECT_THAT(strict.err, HasSubstr("tpuemu-engine estimate: --hlo: cannot price 1 instruction(s): "
                                    "%c (custom-call target \"tpu_custom_call\", line 4)"));
  const RunResult lenient = RunEngine("estimate --hlo " + file + " --allow-unsupported");
  EXPECT_EQ(lenient.exit_code, 0) << lenient.err;
  EXPECT_THAT(lenient.out, HasSubstr("warning_1"));
  const RunResult run = RunEngine("run --hlo " + file);
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_THAT(run.err, HasSubstr("tpuemu-engine run: --hlo: cannot execute 1 instruction(s): %c "
                                 "(line 4): custom-call target \"tpu_custom_call\""));
}

TEST(EngineHlo, BadArgumentsFailWithOneLine) {
  TempDir dir;
  const std::string bad =
      dir.File("bad.hlo", "HloModule m\nENTRY e {\n  ROOT x = f32[] negate(%y)\n}\n");
  const struct {
    std::string args;
    std::string message;
  } cases[] = {
      {"estimate --hlo /nonexistent.hlo", "--hlo: cannot open '/nonexistent.hlo'"},
      {"estimate --hlo " + bad,
       "--hlo: HLO text line 3, column 25: operand %y of %x is not defined"},
      {"estimate --hlo " + bad + " --gemm 4,4,4",
       "--hlo excludes --gemm, --conv, --program and --array"},
      {"estimate --hlo " + Data("cnn_step.hlo") + " --precision ultra",
       "--precision: precision 'ultra' is not one of"},
      {"estimate --hlo " + Data("cnn_step.hlo") + " --top -1",
       "--top: must be 0 (all) or a positive count"},
      {"estimate --hlo " + Data("cnn_step.hlo") + " --accelerator-type v9-8",
       "--accelerator-type:"},
      {"estimate --hlo " + Data("data_parallel_step.hlo") + " --accelerator-type v5litepod-1",
       "the module runs on 4 devices"},
      {"run --hlo " + Data("cnn_step.hlo") + " --value x=1", "--value: expected N=v0,v1,..."},
      {"run --hlo " + Data("cnn_step.hlo") + " --value 0=1,2",
       "parameter 0 (%x) has 16 elements, got 2 values"},
      {"run --hlo " + Data("cnn_step.hlo") + " --format xml", "--format: unknown format 'xml'"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.args);
    const RunResult r = RunEngine(c.args);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_THAT(r.err, HasSubstr(c.message));
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1);
  }
  EXPECT_NE(RunEngine("run").exit_code, 0);  // --hlo is required
}

}  // namespace
}  // namespace tpuemu::cli
