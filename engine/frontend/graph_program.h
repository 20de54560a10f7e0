// HloGraphProgram: an engine::Graph (a JSON program or a built-in workload) lowered to HLO once
// (from_graph.h) and run on the HLO evaluator: how every built-in and program job runs its steps
// (service/jobs/step_runner.h; docs/hlo.md, "Jobs on the HLO evaluator").
//
// Run takes the graph (its constants' init specs) and one feed per parameter by pointer
// (execute_options.h's FeedView); an unfed parameter or a constant takes its init spec (InitCache,
// materialised once per process). Feeds are copied into the evaluator's arrays (recycled
// buffers) in chunks on the job's threads that stop with it; float outputs move out of the
// evaluator's arrays without a copy (both conversions: engine/hlo/tensor_bridge.h). It
// returns the graph's outputs by op id as engine tensors of their dtypes (the SGD update and the
// loss read them).
// options.cancel and options.deadline stop it between instructions and inside long kernels:
// CANCELLED / DEADLINE_EXCEEDED. Thread-safe: Run keeps no state.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "base/status.h"
#include "engine/frontend/from_graph.h"
#include "engine/hardware/numerics.h"
#include "engine/hlo/module.h"
#include "engine/runtime/execute_options.h"

namespace tpuemu::engine::hlo {

class HloGraphProgram {
 public:
  // INVALID_ARGUMENT when the graph cannot be lowered. The module is the one the lowering built,
  // verified as it was (builder.h): it is not printed and parsed again.
  static Result<std::shared_ptr<const HloGraphProgram>> Lower(const Graph& graph);

  // `precision`: the dots' (the compiled program's CompileOptions::precision).
  Result<std::map<std::string, Tensor>> Run(const Graph& graph, const FeedView& feeds,
                                            Precision precision,
                                            const ExecuteOptions& options = {}) const;

  const GraphLowering& lowering() const { return lowering_; }
  const Module& module() const { return lowering_.module; }

 private:
  explicit HloGraphProgram(GraphLowering lowering) : lowering_(std::move(lowering)) {}

  GraphLowering lowering_;
};

}  // namespace tpuemu::engine::hlo
