// The published runs split into a fitting set and a validation set (published_runs.h): the
// calibrated factors in efficiency.h are the fit on the fitting set alone, and the errors on
// both sets stay within the bounds docs/cost-model.md ("Accuracy") states. Prints the tables
// (the same report bench/engine/calibration_bench.cpp prints).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "tests/engine/cost/calibration_report.h"

namespace tpuemu::engine::cost {
namespace {

// docs/cost-model.md, "Accuracy": the bounds the test holds; the aim (training step
// ±15% and MFU ±5 points, serving ±20% out of sample) is reported row by row, not all met.
constexpr double kTrainingStepPercent = 20, kTrainingMfuPoints = 10;
constexpr double kServingInPercent = 30, kServingOutPercent = 25;

TEST(CalibrationSplit, EfficiencyIsTheFitOnTheFittingSetAndErrorsStayWithinBounds) {
  const CalibrationReport r = BuildCalibrationReport();
  std::fputs(r.text.c_str(), stdout);
  // efficiency.h holds what the fitting set gives (the grid's resolution apart).
  EXPECT_NEAR(r.training_fit.mxu, kDefaultEfficiency.mxu, 0.005);
  EXPECT_NEAR(r.training_fit.softmax_ops_forward, kDefaultEfficiency.softmax_ops_forward, 1e-9);
  EXPECT_NEAR(r.training_fit.softmax_ops_backward, kDefaultEfficiency.softmax_ops_backward, 1e-9);
  EXPECT_NEAR(r.training_fit.tp_overlap, kDefaultEfficiency.tp_overlap, 1e-9);
  EXPECT_NEAR(r.serving_fit.serving_hbm_int8, kDefaultEfficiency.serving_hbm_int8, 0.005);
  EXPECT_NEAR(r.serving_fit.jetstream_step_seconds, kDefaultEfficiency.jetstream_step_seconds,
              1e-6);
  EXPECT_NEAR(r.serving_fit.jetstream_sequence_step_seconds,
              kDefaultEfficiency.jetstream_sequence_step_seconds, 1e-7);
  EXPECT_NEAR(r.serving_fit.vllm_step_seconds, kDefaultEfficiency.vllm_step_seconds, 1e-6);

  EXPECT_EQ(r.training_in.n + r.training_out.n, 18);
  EXPECT_GE(r.training_out.n, 7);
  EXPECT_LE(r.training_in.worst_percent, kTrainingStepPercent);
  EXPECT_LE(r.training_out.worst_percent, kTrainingStepPercent);
  EXPECT_LE(r.training_in.worst_mfu_points, kTrainingMfuPoints);
  EXPECT_LE(r.training_out.worst_mfu_points, kTrainingMfuPoints);
  EXPECT_GE(r.serving_out.n, 7);
  EXPECT_LE(r.serving_in.worst_percent, kServingInPercent);
  EXPECT_LE(r.serving_out.worst_percent, kServingOutPercent);
}

}  // namespace
}  // namespace tpuemu::engine::cost
