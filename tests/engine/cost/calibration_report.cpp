#include "tests/engine/cost/calibration_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "tests/engine/cost/calibration.h"

namespace tpuemu::engine::cost {
namespace {

std::string Format(const char* format, auto... args) {
  char buffer[1024];
  std::snprintf(buffer, sizeof buffer, format, args...);
  return buffer;
}

void Add(SplitErrors* e, double percent, double mfu_points, bool within) {
  e->worst_percent = std::max(e->worst_percent, std::abs(percent));
  e->worst_mfu_points = std::max(e->worst_mfu_points, std::abs(mfu_points));
  e->mean_abs_percent += std::abs(percent);
  e->within += within;
  ++e->n;
}

void Finish(SplitErrors* e) {
  if (e->n > 0) e->mean_abs_percent /= e->n;
}

std::string Line(const char* what, const SplitErrors& e, bool mfu) {
  std::string s = Format("%s: %d runs, worst %.0f%%, mean %.0f%%", what, e.n, e.worst_percent,
                         e.mean_abs_percent);
  if (mfu) s += Format(", worst MFU %.1f points", e.worst_mfu_points);
  return s + Format(", %d of %d within the aim\n", e.within, e.n);
}

std::string SetName(RunSet s) { return s == RunSet::kFit ? "fit" : "validation"; }

std::string Shape(const ServingOptions& o) {
  std::string s = Format("%lld, %lld / %lld", static_cast<long long>(o.batch),
                         static_cast<long long>(o.input_len), static_cast<long long>(o.output_len));
  if (o.engine == ServingEngine::kJetStream) {
    s += Format(", cache %lld", static_cast<long long>(o.CacheLen()));
  } else {
    s += Format(", %lld tokens/step", static_cast<long long>(o.ChunkTokens()));
  }
  s += o.weight_bytes == 1 ? ", int8" : ", bf16";
  if (o.tp == 1) s += ", 1 chip/replica";
  return s;
}

}  // namespace

CalibrationReport BuildCalibrationReport(const Efficiency& eff) {
  CalibrationReport r;
  r.training_fit = FitTraining(TrainingSet(RunSet::kFit));
  r.serving_fit = FitServing(ServingSet(RunSet::kFit));
  std::string& t = r.text;
  t += "| Published run | Slice | Set | Published step | Ours | Error | Published MFU | Ours | "
       "Error (points) |\n|---|---|---|---|---|---|---|---|---|\n";
  for (const PublishedTrainingRun& run : PublishedTrainingRuns()) {
    const double step = EstimatedStep(run, eff);
    const double mfu = run.Mfu() * run.Step() / step;
    const double error = (step / run.Step() - 1) * 100, points = (mfu - run.Mfu()) * 100;
    Add(run.set == RunSet::kFit ? &r.training_in : &r.training_out, error, points,
        std::abs(error) <= 15 && std::abs(points) <= 5);
    t += Format("| %s | %s | %s | %.2f s | %.2f s | %+.0f%% | %.1f%% | %.1f%% | %+.1f |\n",
                run.shape.name.c_str(), run.type.c_str(), SetName(run.set).c_str(), run.Step(),
                step, error, run.Mfu() * 100, mfu * 100, points);
  }
  Finish(&r.training_in);
  Finish(&r.training_out);
  t += Line("training in sample (fitting set)", r.training_in, true);
  t += Line("training out of sample (validation set)", r.training_out, true);
  t += Format(
      "training factors fitted on the fitting set: mxu %.2f, softmax %.1f / %.1f element-ops per "
      "score, tensor-parallel overlap %.2f\n\n",
      r.training_fit.mxu, r.training_fit.softmax_ops_forward, r.training_fit.softmax_ops_backward,
      r.training_fit.tp_overlap);

  t += "| Published serving run | Engine | Slice | Batch, in / out, cache or step, weights | Set | "
       "Published out tok/s | Ours | Error |\n|---|---|---|---|---|---|---|---|\n";
  for (const PublishedServingRun& run : PublishedServingRuns()) {
    const double ours = EstimatedServing(run, eff);
    const double error = (ours / run.output_tokens_per_second - 1) * 100;
    const std::string set = run.illustrative ? "shown only: " + run.why : SetName(run.set);
    if (!run.illustrative) {
      Add(run.set == RunSet::kFit ? &r.serving_in : &r.serving_out, error, 0,
          std::abs(error) <= 20);
    }
    t += Format("| %s (%s) | %s | %s | %s | %s | %.0f | %.0f | %+.0f%% |\n", run.shape.name.c_str(),
                run.source.c_str(), ServingEngineName(run.options.engine).c_str(), run.type.c_str(),
                Shape(run.options).c_str(), set.c_str(), run.output_tokens_per_second, ours, error);
  }
  Finish(&r.serving_in);
  Finish(&r.serving_out);
  t += Line("serving in sample (fitting set)", r.serving_in, false);
  t += Line("serving out of sample (validation set)", r.serving_out, false);
  t += Format(
      "serving factors fitted on the fitting set: serving_hbm_int8 %.2f, jetstream step %.2f ms "
      "+ %.0f us per sequence, vllm step %.2f ms\n",
      r.serving_fit.serving_hbm_int8, r.serving_fit.jetstream_step_seconds * 1e3,
      r.serving_fit.jetstream_sequence_step_seconds * 1e6, r.serving_fit.vllm_step_seconds * 1e3);
  // Which rows each fitted serving constant rests on: no public source gives these durations.
  for (ServingEngine engine : {ServingEngine::kJetStream, ServingEngine::kVllm}) {
    std::string rows;
    for (const PublishedServingRun& run : ServingSet(RunSet::kFit)) {
      if (run.options.engine != engine) continue;
      rows += Format("%s%s %s %s", rows.empty() ? "" : "; ", run.shape.name.c_str(),
                     run.type.c_str(), run.options.weight_bytes == 1 ? "int8" : "bf16");
    }
    t += Format("  %s constants (fitted, not published) rest on: %s\n",
                engine == ServingEngine::kJetStream
                    ? "jetstream step, per-sequence time and serving_hbm_int8"
                    : "vllm step",
                rows.c_str());
  }
  return r;
}

}  // namespace tpuemu::engine::cost
