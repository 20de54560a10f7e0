// The HLO entry point the CLI and the job service use to run a module (parsed from HLO text or
// lowered from StableHLO: engine/stablehlo/import.h's ParseAnyModule) on the emulated devices and
// price the run; pricing without running is PriceModule (cost_model.h).
//
// Run: MakeArguments (inputs.h), Evaluate
// (evaluator.h) with the seed for elided constants and rng ops, then PriceModule with the run's
// execution counts (unless RunOptions carries that price already). Errors are those of the pieces
// (INVALID_ARGUMENT for bad text, shapes and limits; UNIMPLEMENTED for what cannot run or be
// priced; CANCELLED). Thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "engine/hardware/hardware.h"
#include "engine/hlo/cost_model.h"
#include "engine/hlo/inputs.h"
#include "engine/hlo/limits.h"
#include "engine/hlo/module.h"
#include "engine/runtime/pool.h"

namespace tpuemu::engine::hlo {

struct RunResult;

struct RunOptions {
  Precision precision = Precision::kDefault;  // dots/convolutions that name none
  InputOptions inputs;                        // inputs.seed also seeds elided constants and rng
  Limits limits;
  bool allow_unsupported_pricing = false;
  const std::atomic<bool>* cancel = nullptr;  // not owned
  Pool* pool = nullptr;                       // EvalOptions' (evaluator.h); not owned
  std::string pool_group = "hlo";
  int max_threads = 0;
  // Prices a caller already has, so that a job's steps do not price the module again (not
  // owned; both for this module, slice and options, or null). `priced` (statically, at submit)
  // stands in for the check that the module can run on the slice before the run spends time,
  // and is the run's price when its counts are exact (ModuleCost::counts_exact); else
  // `last_run`'s cost is this run's when its execution counts are this run's — a job's steps
  // run the same inputs, hence the same counts, so only the first step is priced.
  const ModuleCost* priced = nullptr;
  const RunResult* last_run = nullptr;
};

struct RunResult {
  ModuleCost cost;             // priced with the run's execution counts
  std::vector<Value> outputs;  // the entry's result on each device
  int64_t host_ns = 0;         // wall time of the evaluation
  // The evaluator's counts (EvalResult::executions) the cost was priced with.
  std::vector<std::vector<int64_t>> executions;
  bool repriced = true;  // false: the cost is RunOptions::last_run's or ::priced
};

Result<RunResult> RunModule(const Module& module, const Slice& slice, const RunOptions& options);

// A one-line description of each array of a value (its leaves in order).
struct ArraySummary {
  std::string shape;  // "f32[2,3]"
  int64_t elements = 0;
  double min = 0, max = 0, mean = 0;
  int64_t nans = 0, infs = 0;
  std::vector<double> first;  // up to 8 leading values
};
std::vector<ArraySummary> Summarize(const Value& value);

}  // namespace tpuemu::engine::hlo
