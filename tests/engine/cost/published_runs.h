// Published measurements of real TPU runs, the cost model's test data (docs/cost-model.md,
// "Accuracy"): MaxText training runs (dense and mixture-of-experts, with the remat policy and
// offloading each ran with) and JetStream serving runs. Each carries where it is printed.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/cost/estimate.h"
#include "engine/cost/serving.h"
#include "engine/cost/transformer_model.h"

namespace tpuemu::engine::cost {

struct PublishedTrainingRun {
  std::string source;  // repository path @ commit, or page
  TransformerShape shape;
  std::string type;
  Plan plan;
  Remat remat;
  double step_seconds = 0;     // measured, when the source prints it
  double tflops_per_chip = 0;  // measured, otherwise (the step time is derived from it)

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
  // Printed as an example ("you should see something like") and not used for fitting or the
  // error bounds; shown in the table for what it is.
  bool illustrative = false;
};

const std::vector<PublishedTrainingRun>& PublishedTrainingRuns();
const std::vector<PublishedServingRun>& PublishedServingRuns();

}  // namespace tpuemu::engine::cost
