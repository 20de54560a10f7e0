// Fitting the cost model's calibrated factors (efficiency.h: the MXU efficiency, the flash-
// attention vector cost; for serving the decode HBM efficiency) to published runs, and pricing
// runs with a fitted set: what the leave-one-out test needs to measure the error on runs the
// factors were NOT fitted to.
#pragma once

#include <functional>
#include <vector>

#include "engine/chip/efficiency.h"
#include "tests/engine/cost/published_runs.h"

namespace tpuemu::engine::cost {

// Estimated step time of a published training run with the given factors.
double EstimatedStep(const PublishedTrainingRun& run, const Efficiency& eff);
// Estimated output tokens per second (whole slice) of a published serving run.
double EstimatedServing(const PublishedServingRun& run, const Efficiency& eff);

// The factors that minimise the squared log error of the step time over `runs`: the MXU
// efficiency (0.70..1.00), the softmax costs (0.6·k forward and k backward element-ops per score,
// k = 5..15) and the tensor-parallel overlap (0..1), by coordinate descent over that grid.
Efficiency FitTraining(const std::vector<PublishedTrainingRun>& runs);
// The serving factors that minimise the squared log error of output tokens/s: the int8 HBM share
// (0.20..1.00) with JetStream's step time (0..30 ms by 0.25 ms) on the JetStream rows, and vLLM's
// step time (0..60 ms by 0.25 ms) on the vLLM rows; illustrative runs are left out. A factor
// without rows to fit it keeps its efficiency.h value.
Efficiency FitServing(const std::vector<PublishedServingRun>& runs);

}  // namespace tpuemu::engine::cost
