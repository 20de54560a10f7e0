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
  const auto loss = [&](const Efficiency& eff) {
    double sum = 0;
    for (const PublishedTrainingRun& r : runs) {
      const double e = std::log(EstimatedStep(r, eff) / r.Step());
      sum += e * e;
    }
    return sum;
  };
  // Each factor over its whole grid with the others held, in turn, from a fixed start (MXU 0.82,
  // softmax 6 and 10 ops per score, no overlap), until a sweep changes nothing (the full grid of
  // 31 x 11 x 21 points would make each of the leave-one-out test's 18 fits take seconds).
  struct Axis {
    int lo, hi;
    std::function<void(Efficiency&, int)> set;
  };
  const std::vector<Axis> axes{
      {70, 100, [](Efficiency& e, int m) { e.mxu = m / 100.0; }},
      {5, 15,
       [](Efficiency& e, int k) {
         e.softmax_ops_forward = 0.6 * k;
         e.softmax_ops_backward = 1.0 * k;
       }},
      {0, 20, [](Efficiency& e, int o) { e.tp_overlap = o / 20.0; }},
  };
  Efficiency best = kDefaultEfficiency;
  best.mxu = 0.82;
  best.softmax_ops_forward = 6;
  best.softmax_ops_backward = 10;
  best.tp_overlap = 0;
  double best_loss = loss(best);
  for (int sweep = 0; sweep < 8; ++sweep) {
    bool moved = false;
    for (const Axis& axis : axes) {
      for (int i = axis.lo; i <= axis.hi; ++i) {
        Efficiency eff = best;
        axis.set(eff, i);
        const double l = loss(eff);
        if (l < best_loss - 1e-12) {
          best_loss = l;
          best = eff;
          moved = true;
        }
      }
    }
    if (!moved) break;
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
