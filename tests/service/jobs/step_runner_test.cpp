// StepRunner: a step's metrics row (cycles incl. all-reduce, flops, utilization, loss) and the
// training it drives — the built-in workloads' losses fall over their steps.
#include "service/jobs/step_runner.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/chip/chip_model.h"
#include "engine/frontend/compiler.h"
#include "engine/runtime/pool.h"
#include "service/jobs/job_spec.h"

namespace tpuemu::service {
namespace {

using nlohmann::json;

struct Trained {
  std::vector<db::JobStepRow> steps;
  std::shared_ptr<const engine::CompiledProgram> program;
};

// A runner for `w`'s steps (its graph lowered to HLO), or a failed test.
std::unique_ptr<StepRunner> RunnerFor(const engine::CompiledProgram& program, Workload& w,
                                      const engine::Slice& slice, int tensorcores,
                                      engine::ExecuteOptions exec = {}) {
  auto runner = StepRunner::Create(program, w, slice, tensorcores, std::move(exec));
  EXPECT_TRUE(runner.ok()) << runner.status().ToString();
  return runner.ok() ? std::move(*runner) : nullptr;
}

// Builds the spec's workload, compiles it for `type` and runs every step of the spec.
Trained Train(const char* body, const char* type = "v4-8") {
  JobSpec spec = *ParseJobSpec(json::parse(body));
  Result<Workload> w = Workload::Build(spec);
  EXPECT_TRUE(w.ok()) << w.status().ToString();
  const engine::Slice slice = *engine::Slice::FromAcceleratorType(type);
  auto program = engine::Compile(w->graph(), slice, {});
  EXPECT_TRUE(program.ok()) << program.status().ToString();
  Trained out{{}, *program};
  auto runner = RunnerFor(**program, *w, slice, w->shards() > 1 ? w->shards() : spec.cores);
  if (runner == nullptr) return out;
  for (int64_t step = 0; step < spec.steps; ++step) {
    Result<db::JobStepRow> row = runner->Run(step);
    EXPECT_TRUE(row.ok()) << row.status().ToString();
    if (!row.ok()) break;
    EXPECT_EQ(row->step, step);
    if (row->loss) {
      EXPECT_TRUE(std::isfinite(*row->loss)) << "step " << step;
    }
    out.steps.push_back(*row);
  }
  return out;
}

TEST(StepRunnerTest, MlpLossFallsOver20DataParallelSteps) {
  Trained t = Train(R"({"workload": {"mlp": {"layers": 2, "batch": 32, "hidden": 32,
                                              "steps": 20}}, "cores": 2})");
  ASSERT_EQ(t.steps.size(), 20u);
  EXPECT_LT(*t.steps.back().loss, *t.steps.front().loss * 0.7)
      << "first " << *t.steps.front().loss << " last " << *t.steps.back().loss;
}

// (The transformer's training is in tests/service/workloads/workloads_test.cpp.)

TEST(StepRunnerTest, EveryWorkloadTrainsAndEachStepCostsTheProgramsCycles) {
  // The steps run on the HLO evaluator; the compiled program prices every one of them.
  const char* bodies[] = {
      R"({"workload": {"mlp": {"layers": 2, "batch": 32, "hidden": 32, "steps": 6}}})",
      R"({"workload": {"cnn": {"batch": 8, "channels": 4, "steps": 4}}})",
      R"({"workload": {"transformer": {"layers": 1, "dModel": 32, "heads": 2, "seqLen": 8,
                                       "batch": 4, "steps": 4}}})"};
  for (const char* body : bodies) {
    SCOPED_TRACE(body);
    const Trained t = Train(body);
    ASSERT_FALSE(t.steps.empty());
    for (const db::JobStepRow& row : t.steps) EXPECT_EQ(row.cycles, t.program->totals.cycles);
    EXPECT_LT(*t.steps.back().loss, *t.steps.front().loss);
  }
}

TEST(StepRunnerTest, CnnLossFallsAndTheConvolutionsRunOnTheMxu) {
  Trained t = Train(R"({"workload": {"cnn": {"steps": 15}}})", "v5litepod-8");
  ASSERT_EQ(t.steps.size(), 15u);
  int conv_on_mxu = 0;
  for (const engine::OpPlan& p : t.program->plans) {
    conv_on_mxu += p.on_mxu && (p.kind == engine::OpKind::kConv2D ||
                                p.kind == engine::OpKind::kConv2DBackpropFilter);
  }
  EXPECT_EQ(conv_on_mxu, 2);
  EXPECT_LT(*t.steps.back().loss, *t.steps.front().loss * 0.8);
}

TEST(StepRunnerTest, StepRowAddsTheAllReduceAndCountsEveryShard) {
  JobSpec spec = *ParseJobSpec(json::parse(R"({"workload": {"cnn": {"steps": 1}}, "cores": 2})"));
  Workload w = *Workload::Build(spec);
  const engine::Slice slice = *engine::Slice::FromAcceleratorType("v4-8");
  auto program = *engine::Compile(w.graph(), slice, {});
  auto runner = RunnerFor(*program, w, slice, 2);
  ASSERT_NE(runner, nullptr);
  const int64_t allreduce = engine::TensorCoreCollectiveCycles(
      slice.type(), engine::Collective::kAllReduce, 2, w.GradientBytes());
  EXPECT_GT(allreduce, 0);
  EXPECT_EQ(runner->allreduce_cycles(), allreduce);
  Result<db::JobStepRow> row = runner->Run(0);
  ASSERT_TRUE(row.ok()) << row.status().ToString();
  EXPECT_EQ(row->cycles, program->totals.cycles + allreduce);
  EXPECT_DOUBLE_EQ(row->emulated_seconds, static_cast<double>(row->cycles) / slice.spec().clock_hz);
  EXPECT_DOUBLE_EQ(row->flops, 2 * program->totals.flops);
  const double peak_per_cycle = slice.spec().PeakBf16FlopsPerTensorCore() / slice.spec().clock_hz;
  EXPECT_DOUBLE_EQ(row->mxu_utilization,
                   row->flops / (static_cast<double>(row->cycles) * 2 * peak_per_cycle));
  ASSERT_TRUE(row->loss.has_value());
  EXPECT_TRUE(runner->last_outputs().count("loss"));
  EXPECT_GE(row->host_seconds, 0);
}

TEST(StepRunnerTest, AMatmulHasNoLossAndOneShard) {
  Trained t = Train(R"({"workload": {"matmul": {"m": 8, "n": 8, "k": 8}}, "steps": 2})");
  ASSERT_EQ(t.steps.size(), 2u);
  EXPECT_FALSE(t.steps[0].loss.has_value());
  EXPECT_EQ(t.steps[0].cycles, t.program->totals.cycles);
}

TEST(StepRunnerTest, ARaisedCancelFlagStopsTheStepWithCancelled) {
  JobSpec spec = *ParseJobSpec(json::parse(R"({"workload": {"matmul": {}}})"));
  Workload w = *Workload::Build(spec);
  const engine::Slice slice = *engine::Slice::FromAcceleratorType("v4-8");
  auto program = *engine::Compile(w.graph(), slice, {});
  std::atomic<bool> cancel{true};
  auto runner = RunnerFor(*program, w, slice, 1, {.cancel = &cancel});
  ASSERT_NE(runner, nullptr);
  EXPECT_EQ(runner->Run(0).status().code(), StatusCode::kCancelled);
  EXPECT_TRUE(runner->last_outputs().empty());
}

// Losses of every step and the last outputs of `body`'s job, its shards run with `exec`.
std::pair<std::vector<double>, std::map<std::string, engine::Tensor>> LossesWith(
    const char* body, engine::ExecuteOptions exec) {
  JobSpec spec = *ParseJobSpec(json::parse(body));
  Workload w = *Workload::Build(spec);
  const engine::Slice slice = *engine::Slice::FromAcceleratorType("v4-8");
  auto program = *engine::Compile(w.graph(), slice, {});
  auto runner = RunnerFor(*program, w, slice, w.shards(), exec);
  if (runner == nullptr) return {};
  std::vector<double> losses;
  for (int64_t step = 0; step < spec.steps; ++step) {
    Result<db::JobStepRow> row = runner->Run(step);
    EXPECT_TRUE(row.ok()) << row.status().ToString();
    if (!row.ok()) break;
    losses.push_back(row->loss.value_or(NAN));
  }
  return {losses, runner->last_outputs()};
}

TEST(StepRunnerTest, ShardsSideBySideTrainBitForBitAsOneAfterAnother) {
  const char* body =
      R"({"workload": {"mlp": {"layers": 2, "hidden": 256, "batch": 512, "steps": 3}},
          "cores": 4})";
  const auto [serial_losses, serial_outputs] = LossesWith(body, {});
  engine::Pool pool(3);
  // Four shards on four threads (one each), then on two threads (two at a time).
  for (int threads : {4, 2}) {
    SCOPED_TRACE(threads);
    const auto [losses, outputs] =
        LossesWith(body, {.pool = &pool, .pool_group = "job", .max_threads = threads});
    ASSERT_EQ(losses.size(), 3u);
    for (size_t i = 0; i < losses.size(); ++i) EXPECT_EQ(losses[i], serial_losses[i]) << i;
    ASSERT_EQ(outputs.size(), serial_outputs.size());
    for (const auto& [id, t] : serial_outputs) {
      const engine::Tensor& other = outputs.at(id);
      ASSERT_EQ(other.num_elements(), t.num_elements()) << id;
      for (int64_t i = 0; i < t.num_elements(); ++i) {
        ASSERT_EQ(other.f32()[i], t.f32()[i]) << id << "[" << i << "]";
      }
    }
  }
}

}  // namespace
}  // namespace tpuemu::service
