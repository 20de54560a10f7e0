#include "tests/engine/cost/calibration.h"

#include <cmath>
#include <limits>

namespace tpuemu::engine::cost {

double EstimatedStep(const PublishedTrainingRun& run, const Efficiency& eff) {
  const AcceleratorType type = *FindAcceleratorType(run.type);
  const StepProfile profile = TransformerProfile(run.shape, run.remat, eff);
  return EstimatePlan(profile, type, run.plan, PriceTable::Default(), eff).step_seconds;
}

double EstimatedServing(const PublishedServingRun& run, const Efficiency& eff) {
  const AcceleratorType type = *FindAcceleratorType(run.type);
  const ServingEstimate e =
      EstimateServing(run.shape, type, run.options, PriceTable::Default(), eff);
  return e.output_tokens_per_second_per_chip * type.chips;
}

Efficiency FitTraining(const std::vector<PublishedTrainingRun>& runs) {
  const Efficiency base = kDefaultEfficiency;
  Efficiency best = base;
  double best_loss = std::numeric_limits<double>::infinity();
  for (int m = 70; m <= 100; ++m) {
    for (int k = 5; k <= 15; ++k) {
      Efficiency eff = base;
      eff.mxu = m / 100.0;
      eff.softmax_ops_forward = base.softmax_ops_forward * k / 10.0;
      eff.softmax_ops_backward = base.softmax_ops_backward * k / 10.0;
      double loss = 0;
      for (const PublishedTrainingRun& r : runs) {
        const double e = std::log(EstimatedStep(r, eff) / r.Step());
        loss += e * e;
      }
      if (loss < best_loss) {
        best_loss = loss;
        best = eff;
      }
    }
  }
  return best;
}

Efficiency FitServing(const std::vector<PublishedServingRun>& runs) {
  // The two factors apply to disjoint runs (bf16 or int8 weights): fit each on its own.
  Efficiency best = kDefaultEfficiency;
  for (bool int8 : {false, true}) {
    double best_loss = std::numeric_limits<double>::infinity();
    for (int h = 20; h <= 100; ++h) {
      Efficiency eff = best;
      (int8 ? eff.serving_hbm_int8 : eff.serving_hbm) = h / 100.0;
      double loss = 0;
      for (const PublishedServingRun& r : runs) {
        if (r.illustrative || (r.options.weight_bytes < 2) != int8) continue;
        const double e = std::log(EstimatedServing(r, eff) / r.output_tokens_per_second);
        loss += e * e;
      }
      if (loss < best_loss) {
        best_loss = loss;
        (int8 ? best.serving_hbm_int8 : best.serving_hbm) = h / 100.0;
      }
    }
  }
  return best;
}

}  // namespace tpuemu::engine::cost
