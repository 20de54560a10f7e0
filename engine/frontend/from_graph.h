// Lowers a native engine::Graph to an XLA HLO module, written the way XLA/JAX would write it and
// built instruction by instruction under the verifier's rules (builder.h), with its text
// (printer.h), so the HLO stack (Evaluate, the cost model) runs every engine graph: each job's
// step.
//
// The module's entry takes one parameter per kParameter AND per kConstant op, in graph order:
// constants' values are data (their Init is materialised at run time), so the module holds no
// weights and the caller feeds them. The entry's ROOT is always a tuple of graph.outputs(), in
// order. Every instruction carries metadata={op_name="<graph name>/<op id>"}; instruction names
// are the op ids made into HLO identifiers (unique; helper instructions of a composite op are
// named "<id>.<step>"). Composite ops (gelu, softmax, cross-entropy, their grads) are written out
// as elementwise formulas and reduces; bf16 composites and sums compute in f32, as the native
// kernels do. The mapping per op and how closely the two stacks agree: docs/hlo.md, "Lowering an
// engine graph to HLO".
// Errors: INVALID_ARGUMENT naming the op for an op it cannot lower or whose HLO the verifier
// refuses (Graph::Add has refused both already: LoweredShape), or when the graph itself carries
// an error. Pure function: thread-safe.
#pragma once

#include <optional>

#include <string>
#include <vector>

#include "base/status.h"
#include "engine/frontend/ir.h"
#include "engine/hlo/array.h"
#include "engine/hlo/module.h"
#include "engine/runtime/parallel.h"
#include "engine/runtime/tensor.h"

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

// Lowers `op` alone, `inputs` (the ops it reads, in order) as the entry's parameters, every
// instruction checked and shaped by the verifier's rules as it is written (builder.h), and returns
// the shape of what the op lowers to: how Graph::Add (ir.h) learns an op's shape from the one set
// of rules every HLO module meets, after its own checks of what the graph's ops mean
// (attributes, broadcasting, dtypes). INVALID_ARGUMENT `<kind> "<id>": <the verifier's words>`,
// e.g. `dot "logits": contracting dimension sizes differ: f32[64,128] dim 1 is 128, f32[256,10]
// dim 0 is 256`.
Result<Shape> LoweredShape(const Op& op, const std::vector<const Op*>& inputs);

// The element type a DType lowers to (f32, bf16, s32), and a native tensor as the argument the
// lowered module's parameter takes (the same values, copied). With a parallel context the copy
// runs in chunks on its threads and gives nullopt once its token stops it (a job's step copies
// hundreds of MiB of weights: engine/frontend/graph_program.h).
PrimitiveType LoweredType(DType dtype);
// The DType of an f32, bf16 or s32 element type; INTERNAL for any other (no op lowers to one).
Result<DType> GraphDType(PrimitiveType type);
Value ArgumentOf(const Tensor& t);
std::optional<Value> ArgumentOf(const Tensor& t, const ParallelContext& parallel);

}  // namespace tpuemu::engine::hlo
