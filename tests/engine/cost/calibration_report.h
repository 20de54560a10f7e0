// The calibration report: the published runs (published_runs.h) priced with one set of factors,
// split into the fitting set the factors are fitted on and the validation set the fit never
// sees, as markdown tables with the in-sample and out-of-sample errors — training step time and
// MFU, serving output tokens/s. docs/cost-model.md ("Accuracy") prints these tables;
// tests/engine/cost/calibration_split_test.cpp holds them to the bounds stated there and
// bench/engine/calibration_bench.cpp prints them.
#pragma once

#include <string>

#include "engine/chip/efficiency.h"

namespace tpuemu::engine::cost {

struct SplitErrors {
  int n = 0;
  double worst_percent = 0, mean_abs_percent = 0;  // step time or output tokens/s
  double worst_mfu_points = 0;                     // training only
  int within = 0;  // rows within the aim (step ±15% and MFU ±5 points; serving ±20%)
};

struct CalibrationReport {
  std::string text;  // markdown: the two tables, their error lines and the fitted factors
  Efficiency training_fit, serving_fit;  // the factors fitted on the fitting sets alone
  SplitErrors training_in, training_out, serving_in, serving_out;
};

// Every run priced with `eff` (efficiency.h's factors unless given).
CalibrationReport BuildCalibrationReport(const Efficiency& eff = kDefaultEfficiency);

}  // namespace tpuemu::engine::cost
