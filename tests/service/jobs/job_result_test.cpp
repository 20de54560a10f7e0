#include "service/jobs/job_result.h"

#include <gtest/gtest.h>

namespace tpuemu::service {
namespace {

using nlohmann::json;

TEST(RunTotalsTest, SumsStepsAndKeepsTheLastLoss) {
  RunTotals totals;
  totals.Add({.step = 0,
              .loss = 2.0,
              .cycles = 10,
              .emulated_seconds = 1,
              .flops = 4,
              .host_seconds = 0.5});
  totals.Add({.step = 1,
              .loss = 1.5,
              .cycles = 10,
              .emulated_seconds = 1,
              .flops = 4,
              .host_seconds = 0.25});
  EXPECT_EQ(totals.cycles, 20);
  EXPECT_DOUBLE_EQ(totals.emulated_seconds, 2);
  EXPECT_DOUBLE_EQ(totals.flops, 8);
  EXPECT_DOUBLE_EQ(totals.host_seconds, 0.75);
  EXPECT_EQ(totals.final_loss, 1.5);
  RunTotals no_loss;
  no_loss.Add({.step = 0, .cycles = 1});
  EXPECT_FALSE(no_loss.final_loss.has_value());
}

TEST(SummarizeTensorTest, ChecksumAndTheFirstFourElements) {
  engine::Tensor t = *engine::Tensor::FromF32({2, 3}, {1, 2, 3, 4, 5, 6});
  json s = SummarizeTensor(t);
  EXPECT_EQ(s["dtype"], "f32");
  EXPECT_EQ(s["shape"], json::array({2, 3}));
  EXPECT_DOUBLE_EQ(s["checksum"].get<double>(), 21);
  EXPECT_EQ(s["sample"], json::array({1.0, 2.0, 3.0, 4.0}));
  json i = SummarizeTensor(*engine::Tensor::FromI32({2}, {7, -1}));
  EXPECT_DOUBLE_EQ(i["checksum"].get<double>(), 6);
}

TEST(AssembleResultTest, MetricsFromTheTotalsAndTheProgram) {
  engine::CompileCache cache;
  const engine::Slice slice = *engine::Slice::FromAcceleratorType("v4-8");
  JobSpec spec = *ParseJobSpec(json::parse(R"({"workload": {"matmul": {"m": 8}}, "steps": 2})"));
  Workload w = *Workload::Build(spec);
  CompiledJob compiled = *CompileJob(cache, "j", spec, w, slice);
  RunTotals totals;
  totals.Add(
      {.step = 0, .cycles = 100, .emulated_seconds = 1e-6, .flops = 2e6, .host_seconds = 0.001});
  totals.Add(
      {.step = 1, .cycles = 101, .emulated_seconds = 1e-6, .flops = 2e6, .host_seconds = 0.001});
  std::map<std::string, engine::Tensor> outputs;
  outputs["c"] = *engine::Tensor::FromF32({1, 2}, {0.5, 0.25});
  json r = AssembleResult(compiled,
                          {.steps = 2, .allreduce_cycles_per_step = 0, .accelerator_type = "v4-8"},
                          totals, outputs);
  EXPECT_EQ(r["profile"], compiled.profile);
  EXPECT_DOUBLE_EQ(r["outputs"]["c"]["checksum"].get<double>(), 0.75);
  EXPECT_FALSE(r.contains("finalLoss"));
  const json& m = r["metrics"];
  EXPECT_EQ(m["steps"], 2);
  EXPECT_EQ(m["compileCacheHit"], false);
  EXPECT_EQ(m["cyclesPerStep"], 100);  // integer division of the total
  EXPECT_DOUBLE_EQ(m["emulatedSecondsTotal"].get<double>(), 2e-6);
  EXPECT_DOUBLE_EQ(m["flopsTotal"].get<double>(), 4e6);
  EXPECT_DOUBLE_EQ(m["emulatedTflops"].get<double>(), 4e6 / 2e-6 / 1e12);
  EXPECT_EQ(m["mxuUtilization"], compiled.program().totals.mxu_utilization);
  EXPECT_EQ(m["hbmPeakBytesPerTensorCore"], compiled.program().peak_hbm_bytes_per_tensorcore);
  EXPECT_EQ(m["allReduceCyclesPerStep"], 0);
  EXPECT_DOUBLE_EQ(m["hostSecondsTotal"].get<double>(), 0.002);
  EXPECT_EQ(m["acceleratorType"], "v4-8");

  totals.final_loss = 0.5;
  EXPECT_EQ(AssembleResult(compiled, {.steps = 2}, totals, {})["finalLoss"], 0.5);
  EXPECT_EQ(AssembleResult(compiled, {.steps = 2}, RunTotals{}, {})["metrics"]["emulatedTflops"],
            0.0);
}

}  // namespace
}  // namespace tpuemu::service
