// The comparison: one source (model shapes, or a program's StepProfile) on every candidate
// accelerator type, each with the fastest plan that fits — or the plan the caller names.
//
// Candidates: accelerator types ("v5p-128") and generations ("v5e": every documented size of it);
// none = every type in the catalog (engine/hardware/hardware.h). Plans tried per type unless named:
// dp, fsdp, and tp at each degree in {2, 4, 8, 16} that divides the chips and the model's heads (TP
// x FSDP when the slice has more chips than the degree), for a mixture of experts fsdp with expert
// parallelism at each degree in {2, 4, 8, ...} dividing the experts and the chips; for model shapes
// also the remat policies of AutoRemats() (remat_policy.h: minimal, full, save_dot_except_mlpwi and
// the offloading ones) unless one is named ("none" only when named: no published run the model is
// calibrated on trains without rematerialisation). When no plan fits, the memory levers the recipes
// use come next: optimizer-state offload, then gradient accumulation at 2, 4 and 8 microbatches.
// The best plan is the fastest one that fits; when none fits, the one needing the least memory,
// marked with why it does not fit. Stateless: thread-safe.
#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "base/status.h"
#include "engine/cost/estimate.h"
#include "engine/cost/gpu_reference.h"
#include "engine/cost/serving.h"
#include "engine/cost/transformer_model.h"

namespace tpuemu::engine::cost {

struct CompareOptions {
  std::vector<std::string> candidates;  // types or generations; empty = all
  std::optional<Strategy> strategy;     // empty = the fastest that fits
  int tp = 0;                           // tp degree for Strategy::kTensorParallel; 0 = try all
  std::optional<Remat> remat;           // model shapes only; empty = try all
  int ep = 0;                           // expert-parallel degree; 0 = try all (MoE only)
  int cp = 0;            // context-parallel degree; 0 = those a batch below the chips needs
  int microbatches = 0;  // gradient accumulation; 0 = only when nothing fits
  std::optional<bool> offload_optimizer;  // empty = only when nothing fits
  PriceTable prices = PriceTable::Default();
  Efficiency efficiency = kDefaultEfficiency;
  bool keep_all_plans = false;            // also return every plan evaluated
  std::optional<ServingOptions> serving;  // model shapes: also price serving on every type
};

// Model shapes (priced once per remat policy) or a program's profile.
using CompareSource = std::variant<TransformerShape, StepProfile>;

struct TypeComparison {
  Estimate best;
  std::vector<Estimate> plans;             // every plan evaluated (CompareOptions::keep_all_plans)
  std::optional<ServingEstimate> serving;  // CompareOptions::serving
};

struct Comparison {
  std::string name, source, unit;  // from the profile
  double units_per_step = 0, model_flops = 0, parameters = 0;
  int64_t global_batch = 0;
  std::vector<TypeComparison> rows;  // catalog order
  int plans_evaluated = 0;
  std::optional<ServingOptions> serving;  // as asked
  // H100 and H200 for context, outside the TPU model (gpu_reference.h): never in `rows`.
  std::vector<GpuReferenceRow> gpu_reference;
};

// The candidate types, in catalog order. NOT_FOUND naming an unknown type or generation.
Result<std::vector<AcceleratorType>> ResolveCandidates(const std::vector<std::string>& names);

// INVALID_ARGUMENT for options that do not apply (remat for a program, tp without the tp
// strategy), NOT_FOUND for unknown candidates.
Result<Comparison> Compare(const CompareSource& source, const CompareOptions& options);

}  // namespace tpuemu::engine::cost
