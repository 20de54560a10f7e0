// Published measurements of real TPU runs, the cost model's test data (docs/cost-model.md,
// "Accuracy"): MaxText training runs (dense and mixture-of-experts, with the remat policy and
// offloading each ran with) and JetStream and vLLM serving runs. Each carries where it is printed
// and which set it belongs to: the fitting set the calibrated factors (efficiency.h) are fitted
// on, or the validation set the fit never sees. The split is a rule fixed before any error was
// looked at: within each generation (training) or each engine and weight type (serving), in the
// source's order, the first row fits, the next validates, and so on.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/cost/estimate.h"
#include "engine/cost/serving.h"
#include "engine/cost/transformer_model.h"

namespace tpuemu::engine::cost {

enum class RunSet { kFit, kValidation };

struct PublishedTrainingRun {
  std::string source;  // repository path @ commit, or page
  TransformerShape shape;
  std::string type;
  Plan plan;
  Remat remat;
  double step_seconds = 0;     // measured, when the source prints it
  double tflops_per_chip = 0;  // measured, otherwise (the step time is derived from it)
  RunSet set = RunSet::kFit;

  // The published step time, and the published MFU on the chip's peak.
  double Step() const;
  double Mfu() const;
  std::string Generation() const;
};

struct PublishedServingRun {
  std::string source;
  TransformerShape shape;
  std::string type;
  ServingOptions options;
  double output_tokens_per_second = 0;  // the whole slice's, as published
  RunSet set = RunSet::kFit;
  // Shown in the table for what it is, never fitted nor bounded: an example printed as "you
  // should see something like", or a row whose published configuration cannot have run as
  // stated (`why`).
  bool illustrative = false;
  std::string why;
};

const std::vector<PublishedTrainingRun>& PublishedTrainingRuns();
const std::vector<PublishedServingRun>& PublishedServingRuns();

// The rows of one set (illustrative rows in neither).
std::vector<PublishedTrainingRun> TrainingSet(RunSet set);
std::vector<PublishedServingRun> ServingSet(RunSet set);

}  // namespace tpuemu::engine::cost
