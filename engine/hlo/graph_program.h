// HloGraphProgram: a native engine::Graph (a JSON program or a built-in workload) lowered to HLO
// once (from_graph.h) and run on the HLO evaluator in place of the native executor — the path by
// which every job is to run on one IR (docs/hlo.md, "Jobs on the HLO evaluator").
//
// Run takes what ExecuteBorrowed takes: the graph (its constants' init specs) and one feed per
// parameter by pointer; an unfed parameter or a constant takes its init spec (InitCache, as the
// executor does). It returns the graph's outputs by op id as native tensors of their dtypes, so a
// caller (service/jobs/step_runner.h: the SGD update, the loss) cannot tell the two paths apart
// except by their numbers: the reductions fold in f32 in row-major order as XLA's evaluator does,
// where the native kernels accumulate sums in double (docs/hlo.md lists what is bit-exact).
// options.cancel and options.deadline stop it between instructions and inside long kernels:
// CANCELLED / DEADLINE_EXCEEDED. Thread-safe: Run keeps no state.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "base/status.h"
#include "engine/executor.h"
#include "engine/hlo/from_graph.h"
#include "engine/hlo/module.h"

namespace tpuemu::engine::hlo {

class HloGraphProgram {
 public:
  // INVALID_ARGUMENT when the graph cannot be lowered; INTERNAL when its lowering does not parse
  // (a bug in from_graph).
  static Result<std::shared_ptr<const HloGraphProgram>> Lower(const Graph& graph);

  // `precision`: the dots' (the compiled program's CompileOptions::precision).
  Result<std::map<std::string, Tensor>> Run(const Graph& graph, const FeedView& feeds,
                                            Precision precision,
                                            const ExecuteOptions& options = {}) const;

  const GraphLowering& lowering() const { return lowering_; }
  const Module& module() const { return module_; }

 private:
  HloGraphProgram(GraphLowering lowering, Module module)
      : lowering_(std::move(lowering)), module_(std::move(module)) {}

  GraphLowering lowering_;
  Module module_;
};

}  // namespace tpuemu::engine::hlo
