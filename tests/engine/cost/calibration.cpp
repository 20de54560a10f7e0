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
  const auto loss = [&](const Efficiency& eff, ServingEngine engine, bool* any) {
    double sum = 0;
    for (const PublishedServingRun& r : runs) {
      if (r.illustrative || r.options.engine != engine) continue;
      *any = true;
      const double e = std::log(EstimatedServing(r, eff) / r.output_tokens_per_second);
      sum += e * e;
    }
    return sum;
  };
  Efficiency best = kDefaultEfficiency;
  double best_loss = std::numeric_limits<double>::infinity();
  bool any = false;
  for (int h = 20; h <= 100; h += 2) {
    for (int t = 0; t <= 60; ++t) {
      for (int q = 0; q <= 50; ++q) {
        Efficiency eff = kDefaultEfficiency;
        eff.serving_hbm_int8 = h / 100.0;
        eff.jetstream_step_seconds = t * 0.5e-3;
        eff.jetstream_sequence_step_seconds = q * 2e-6;
        const double l = loss(eff, ServingEngine::kJetStream, &any);
        if (!any) break;
        if (l < best_loss) {
          best_loss = l;
          best.serving_hbm_int8 = eff.serving_hbm_int8;
          best.jetstream_step_seconds = eff.jetstream_step_seconds;
          best.jetstream_sequence_step_seconds = eff.jetstream_sequence_step_seconds;
        }
      }
      if (!any) break;
    }
    if (!any) break;
  }
  best_loss = std::numeric_limits<double>::infinity();
  any = false;
  for (int t = 0; t <= 240; ++t) {
    Efficiency eff = best;
    eff.vllm_step_seconds = t * 0.25e-3;
    const double l = loss(eff, ServingEngine::kVllm, &any);
    if (!any) break;
    if (l < best_loss) {
      best_loss = l;
      best.vllm_step_seconds = eff.vllm_step_seconds;
    }
  }
  return best;
}

}  // namespace tpuemu::engine::cost
