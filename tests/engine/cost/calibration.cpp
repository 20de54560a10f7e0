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
  Efficiency best = kDefaultEfficiency;
  double best_loss = std::numeric_limits<double>::infinity();
  for (int h = 30; h <= 100; ++h) {
    Efficiency eff = kDefaultEfficiency;
    eff.serving_hbm = h / 100.0;
    double loss = 0;
    for (const PublishedServingRun& r : runs) {
      const double e = std::log(EstimatedServing(r, eff) / r.output_tokens_per_second);
      loss += e * e;
    }
    if (loss < best_loss) {
      best_loss = loss;
      best = eff;
    }
  }
  return best;
}

}  // namespace tpuemu::engine::cost
