// The comparison: one source (model shapes, or a program's StepProfile) on every candidate
// accelerator type, each with the fastest plan that fits — or the plan the caller names.
//
// Candidates: accelerator types ("v5p-128") and generations ("v5e": every documented size of it);
// none = every type in the catalog (engine/hardware.h). Plans tried per type unless named: dp,
// fsdp, and tp at each degree in {2, 4, 8, 16} that divides the chips and the model's heads
// (TP x FSDP when the slice has more chips than the degree); for model shapes also the remat
// policies minimal and full unless one is named ("none" only when named: no published run the
// model is calibrated on trains without rematerialisation). The best plan is the fastest one that
// fits; when none fits, the one needing the least memory, marked with why it does not fit.
// Stateless: thread-safe.
#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "base/status.h"
#include "engine/cost/estimate.h"
#include "engine/cost/transformer_model.h"

namespace tpuemu::engine::cost {

struct CompareOptions {
  std::vector<std::string> candidates;  // types or generations; empty = all
  std::optional<Strategy> strategy;     // empty = the fastest that fits
  int tp = 0;                           // tp degree for Strategy::kTensorParallel; 0 = try all
  std::optional<Remat> remat;           // model shapes only; empty = try all
  PriceTable prices = PriceTable::Default();
  Efficiency efficiency = kDefaultEfficiency;
  bool keep_all_plans = false;  // also return every plan evaluated
};

// Model shapes (priced once per remat policy) or a program's profile.
using CompareSource = std::variant<TransformerShape, StepProfile>;

struct TypeComparison {
  Estimate best;
  std::vector<Estimate> plans;  // every plan evaluated (CompareOptions::keep_all_plans)
};

struct Comparison {
  std::string name, source, unit;  // from the profile
  double units_per_step = 0, model_flops = 0, parameters = 0;
  int64_t global_batch = 0;
  std::vector<TypeComparison> rows;  // catalog order
  int plans_evaluated = 0;
};

// The candidate types, in catalog order. NOT_FOUND naming an unknown type or generation.
Result<std::vector<AcceleratorType>> ResolveCandidates(const std::vector<std::string>& names);

// INVALID_ARGUMENT for options that do not apply (remat for a program, tp without the tp
// strategy), NOT_FOUND for unknown candidates.
Result<Comparison> Compare(const CompareSource& source, const CompareOptions& options);

}  // namespace tpuemu::engine::cost
