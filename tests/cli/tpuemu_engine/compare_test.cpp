// Runs the real `tpuemu-engine compare`: the three formats, and exit code 2 with a message naming
// the flag on bad input.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/hardware.h"
#include "tests/cli/child_process.h"

namespace tpuemu::cli {
namespace {

using testing::ChildProcess;
using testing::ProcessResult;

ProcessResult Compare(std::vector<std::string> args) {
  args.insert(args.begin(), {TPUEMU_ENGINE_BIN, "compare"});
  return ChildProcess::Run(args, {});
}

TEST(EngineCompare, TableCsvAndJson) {
  const ProcessResult table = Compare({"--model", "llama2-7b", "--accelerator-types", "v5e"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("llama2-7b (model): 6.74B parameters"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("v5litepod-256"), std::string::npos);
  EXPECT_NE(table.out.find("does not fit"), std::string::npos);

  const ProcessResult csv = Compare({"--model", "llama2-7b", "--format", "csv"});
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  size_t lines = 0;
  for (char c : csv.out) lines += c == '\n';
  EXPECT_EQ(lines, engine::AllAcceleratorTypes().size() + 1);  // a header, one row per type

  const ProcessResult json = Compare({"--layers",
                                      "4",
                                      "--d-model",
                                      "512",
                                      "--heads",
                                      "8",
                                      "--ffn",
                                      "2048",
                                      "--vocab",
                                      "1000",
                                      "--seq-len",
                                      "256",
                                      "--global-batch",
                                      "32",
                                      "--accelerator-types",
                                      "v6e-4",
                                      "--strategy",
                                      "tp",
                                      "--tp",
                                      "2",
                                      "--format",
                                      "json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const nlohmann::json j = nlohmann::json::parse(json.out);
  ASSERT_EQ(j["rows"].size(), 1u);
  EXPECT_EQ(j["rows"][0]["plan"], "tp 2x2 fsdp");
  EXPECT_EQ(j["name"], "custom");
}

TEST(EngineCompare, BadInputExitsTwoNamingTheFlag) {
  const ProcessResult format = Compare({"--model", "llama2-7b", "--format", "xml"});
  EXPECT_EQ(format.exit_code, 2);
  EXPECT_EQ(
      format.err,
      "tpuemu-engine compare: --format: unknown format 'xml' (expected table, json or csv)\n");
  const ProcessResult nothing = Compare({});
  EXPECT_EQ(nothing.exit_code, 2);
  EXPECT_NE(nothing.err.find("give --model PRESET"), std::string::npos) << nothing.err;
  const ProcessResult missing = Compare({"--program", "/nonexistent.json"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_EQ(missing.err, "tpuemu-engine compare: --program: cannot open '/nonexistent.json'\n");
  const ProcessResult type = Compare({"--model", "llama2-7b", "--accelerator-types", "v9"});
  EXPECT_EQ(type.exit_code, 2);
  EXPECT_NE(type.err.find("unknown accelerator type or generation 'v9'"), std::string::npos);
}

}  // namespace
}  // namespace tpuemu::cli
