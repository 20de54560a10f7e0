// Runs the real tpuemu-engine binary: exit codes, JSON fields, and that its numbers are the
// timing model's.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "engine/chip/chip_model.h"
#include "engine/chip/timing.h"
#include "engine/hardware/hardware.h"
#include "tests/cli/tpuemu_engine/engine_cli.h"

namespace tpuemu::cli {
namespace {

TEST(EngineEstimate, GemmOnDefaultSliceReportsTheCostModel) {
  const nlohmann::json j = RunJson("estimate --gemm 4096,4096,4096");
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j["accelerator_type"], "v4-8");
  EXPECT_EQ(j["tensorcores"], 8);
  const engine::ChipSpec& v4 = engine::Spec(engine::Generation::kV4);
  const engine::OpCost want = engine::OnChip(
      v4, engine::DotCost(v4, 1, {4096, 4096, 4096}, 1, 2, 8), 8, engine::TimingMode::kTpu);
  EXPECT_EQ(j["cycles"].get<int64_t>(), want.cycles);
  EXPECT_DOUBLE_EQ(j["seconds"].get<double>(), want.seconds);
  EXPECT_DOUBLE_EQ(j["flops"].get<double>(), 2.0 * 4096.0 * 4096.0 * 4096.0);
  EXPECT_DOUBLE_EQ(j["hbm_bytes"].get<double>(), want.hbm_bytes);
  // A full-array GEMM runs at the fitted Efficiency::mxu.
  EXPECT_NEAR(j["mxu_utilization"].get<double>(), engine::kDefaultEfficiency.mxu, 0.01);
  EXPECT_EQ(j["bound"], "compute");
}

TEST(EngineEstimate, ScaleSimOnABareArrayEqualsScaleSimGemm) {
  for (const char* df : {"ws", "os", "is"}) {
    SCOPED_TRACE(df);
    const nlohmann::json j = RunJson(std::string("estimate --gemm 300,200,100 --array 32x16 ") +
                                     "--timing scalesim --dataflow " + df);
    ASSERT_TRUE(j.is_object());
    const engine::GemmTiming want =
        engine::ScaleSimGemm({300, 200, 100}, {32, 16}, *engine::ParseDataflow(df));
    EXPECT_EQ(j["cycles"].get<int64_t>(), want.cycles);
    EXPECT_EQ(j["folds"].get<int64_t>(), want.folds);
    EXPECT_DOUBLE_EQ(j["mapping_efficiency"].get<double>(), want.mapping_efficiency);
    EXPECT_DOUBLE_EQ(j["compute_utilization"].get<double>(), want.compute_utilization);
    EXPECT_DOUBLE_EQ(j["seconds"].get<double>(), static_cast<double>(want.cycles) / 1e9);
  }
}

TEST(EngineEstimate, TpuTimingOnABareArrayEqualsTpuMxuGemm) {
  const nlohmann::json j = RunJson("estimate --gemm 256,256,256 --array 128x128 --clock-hz 2e9");
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j["cycles"].get<int64_t>(), 1406);  // tests/engine/chip/timing_test.cpp, by hand
  EXPECT_DOUBLE_EQ(j["seconds"].get<double>(), 1406 / 2e9);
}

TEST(EngineEstimate, ConvWithSamePaddingMapsToTheIm2colGemm) {
  const nlohmann::json j = RunJson(
      "estimate --conv 224,224,3,7,7,64,2 --padding same --batch 2 "
      "--accelerator-type v5litepod-8");
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j["out_h"], 112);
  EXPECT_EQ(j["m"], 2 * 112 * 112);
  EXPECT_EQ(j["k"], 7 * 7 * 3);
  EXPECT_EQ(j["n"], 64);
  EXPECT_EQ(j["generation"], "v5e");
  EXPECT_DOUBLE_EQ(j["flops"].get<double>(), 2.0 * 2 * 112 * 112 * 64 * 147);
}

TEST(EngineEstimate, HigherPrecisionCostsMoreCyclesForTheSameFlops) {
  const nlohmann::json fast = RunJson("estimate --gemm 2048,2048,2048 --cores 1");
  const nlohmann::json slow =
      RunJson("estimate --gemm 2048,2048,2048 --cores 1 --precision highest");
  EXPECT_EQ(fast["flops"], slow["flops"]);
  EXPECT_EQ(slow["passes"], 6);
  EXPECT_GT(slow["cycles"].get<int64_t>(), 5 * fast["cycles"].get<int64_t>());
}

TEST(EngineEstimate, TableIsAlignedKeyValueLines) {
  const RunResult r = RunEngine("estimate --gemm 128,128,128");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream lines(r.out);
  std::string line;
  size_t value_column = std::string::npos;
  int count = 0;
  while (std::getline(lines, line)) {
    const size_t space = line.find(' ');
    ASSERT_NE(space, std::string::npos) << line;
    const size_t value = line.find_first_not_of(' ', space);
    if (value_column == std::string::npos) value_column = value;
    EXPECT_EQ(value, value_column) << line;
    ++count;
  }
  EXPECT_GT(count, 10);
  EXPECT_NE(r.out.find("\ncycles "), std::string::npos);
  EXPECT_NE(r.out.find("mxu_utilization"), std::string::npos);
  EXPECT_NE(r.out.find("hbm_bytes"), std::string::npos);
}

struct BadCase {
  const char* args;
  const char* must_mention;
};

class BadArguments : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadArguments, FailWithAOneLineMessageNamingTheFlag) {
  const BadCase c = GetParam();
  const RunResult r = RunEngine(c.args);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_NE(r.err.find(c.must_mention), std::string::npos) << r.err;
}

INSTANTIATE_TEST_SUITE_P(
    Cli, BadArguments,
    ::testing::Values(
        BadCase{"estimate --gemm 1,x,3", "--gemm"}, BadCase{"estimate --gemm 0,4,4", "--gemm"},
        BadCase{"estimate --gemm=-1,4,4", "--gemm"}, BadCase{"estimate --gemm 4,4", "--gemm"},
        BadCase{"estimate --gemm 4,4,4,4", "--gemm"},
        BadCase{"estimate --gemm 4,4,4 --accelerator-type v9-8", "--accelerator-type"},
        BadCase{"estimate --gemm 4,4,4 --timing scalesim --dataflow xs", "--dataflow"},
        BadCase{"estimate --gemm 4,4,4 --dataflow os", "--dataflow"},
        BadCase{"estimate --gemm 4,4,4 --conv 8,8,3,3,3,4", "--conv"},
        BadCase{"estimate", "--gemm"}, BadCase{"estimate --gemm 4,4,4 --batch 0", "--batch"},
        BadCase{"estimate --gemm 4,4,4 --batch abc", "--batch"},
        BadCase{"estimate --gemm 4,4,4 --cores 64", "--cores"},
        BadCase{"estimate --gemm 4,4,4 --array 0x8", "--array"},
        BadCase{"estimate --gemm 4,4,4 --array 8x8 --clock-hz 0", "--clock-hz"},
        BadCase{"estimate --gemm 4,4,4 --precision low", "--precision"},
        BadCase{"estimate --gemm 4,4,4 --format xml", "--format"},
        BadCase{"estimate --conv 2,2,1,3,3,4", "--conv"},
        BadCase{"estimate --conv 8,8,1,3,3,4 --padding full", "--padding"}),
    [](const auto& info) { return "Case" + std::to_string(info.index); });

// Writes `text` to a fresh temporary file and removes it when the test ends.
class TempFile {
 public:
  explicit TempFile(const std::string& text) {
    char path[] = "/tmp/tpuemu_program_XXXXXX";
    const int fd = mkstemp(path);
    if (fd >= 0) close(fd);
    path_ = path;
    std::ofstream(path_) << text;
  }
  ~TempFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

constexpr const char* kMlp = R"({"name": "mlp", "ops": [
  {"id": "x", "op": "parameter", "shape": [256, 512], "dtype": "bf16"},
  {"id": "w", "op": "constant", "shape": [512, 128], "dtype": "bf16", "random": {"seed": 1}},
  {"id": "y", "op": "dot", "inputs": ["x", "w"]},
  {"id": "r", "op": "relu", "inputs": ["y"]}], "outputs": ["r"]})";

TEST(EngineEstimate, ProgramReportsTotalsAndOneRowPerOp) {
  const TempFile program(kMlp);
  const nlohmann::json j =
      RunJson("estimate --program " + program.path() + " --accelerator-type v5litepod-1");
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j["program"], "mlp");
  EXPECT_EQ(j["ops"], 4);
  ASSERT_EQ(j["per_op"].size(), 4u);
  const nlohmann::json& dot = j["per_op"][2];
  EXPECT_EQ(dot["op"], "dot");
  EXPECT_EQ(dot["unit"], "mxu");
  EXPECT_DOUBLE_EQ(dot["flops"].get<double>(), 2.0 * 256 * 512 * 128);
  EXPECT_GT(dot["cycles"].get<int64_t>(), 0);
  EXPECT_EQ(j["per_op"][3]["unit"], "vpu");
  EXPECT_GE(j["cycles"].get<int64_t>(), dot["cycles"].get<int64_t>());
  EXPECT_GT(j["peak_hbm_bytes_per_tensorcore"].get<int64_t>(), 0);

  const RunResult table = RunEngine("estimate --program " + program.path());
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("per_op:"), std::string::npos);
  EXPECT_NE(table.out.find("dot"), std::string::npos);
}

TEST(EngineEstimate, ProgramErrorsNameTheFlag) {
  const RunResult missing = RunEngine("estimate --program /nonexistent/program.json");
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.err.find("--program"), std::string::npos) << missing.err;
  const TempFile bad(R"({"ops": [{"id": "a", "op": "frob"}]})");
  const RunResult unknown = RunEngine("estimate --program " + bad.path());
  EXPECT_NE(unknown.exit_code, 0);
  EXPECT_NE(unknown.err.find("frob"), std::string::npos) << unknown.err;
  const TempFile good(kMlp);
  const RunResult on_array = RunEngine("estimate --array 8x8 --program " + good.path());
  EXPECT_NE(on_array.exit_code, 0);
  EXPECT_NE(on_array.err.find("--array"), std::string::npos) << on_array.err;
}

TEST(EngineEstimate, UnknownSubcommandOrFlagIsAParseError) {
  EXPECT_NE(RunEngine("frobnicate").exit_code, 0);
  EXPECT_NE(RunEngine("estimate --gemm 4,4,4 --bogus 1").exit_code, 0);
  EXPECT_NE(RunEngine("").exit_code, 0);
}

}  // namespace
}  // namespace tpuemu::cli
