// Lowers a native engine::Graph to an XLA HLO module, its ops one after another by the op
// lowering (op_lowering.h: each op written the way XLA/JAX would write it, instruction by
// instruction under the verifier's rules), with its text (printer.h), so the HLO stack (Evaluate,
// the cost model) runs every engine graph: each job's step.
//
// The module's entry takes one parameter per kParameter AND per kConstant op, in graph order:
// constants' values are data (their Init is materialised at run time), so the module holds no
// weights and the caller feeds them (tensor_bridge.h's ArgumentOf makes a tensor an argument).
// The entry's ROOT is always a tuple of graph.outputs(), in order. Every instruction carries
// metadata={op_name="<graph name>/<op id>"}; instruction names are the op ids made into HLO
// identifiers (unique; helper instructions of a composite op are named "<id>.<step>"). Composite
// ops (gelu, softmax, cross-entropy, their grads) are written out as elementwise formulas and
// reduces; bf16 composites and sums compute in f32, as the native kernels do. The mapping per op
// and how closely the two stacks agree: docs/hlo.md, "Lowering an engine graph to HLO".
// Errors: INVALID_ARGUMENT naming the op for an op it cannot lower or whose HLO the verifier
// refuses (Graph::Add has refused both already: LoweredShape), or when the graph itself carries
// an error. Pure function: thread-safe.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "engine/frontend/ir.h"
#include "engine/frontend/op_lowering.h"
#include "engine/hlo/module.h"
#include "engine/hlo/tensor_bridge.h"

namespace tpuemu::engine::hlo {

struct GraphLowering {
  std::string text;                     // "HloModule <graph name> ..." parseable by ParseModule
  std::vector<std::string> parameters;  // graph op id of entry parameter i, in parameter order
  std::vector<std::string> outputs;     // graph output ids in the order of the entry's result
  // The module itself, verified as it was built: what `text` parses back to (printer.h), so the
  // job that runs it need not parse it.
  Module module;
};

Result<GraphLowering> LowerGraph(const Graph& graph);

}  // namespace tpuemu::engine::hlo
