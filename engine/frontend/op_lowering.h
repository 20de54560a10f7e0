// The lowering of one engine op to HLO, written the way XLA/JAX would write it and built
// instruction by instruction under the verifier's rules (builder.h): what Graph::Add (ir.h) asks
// for an op's shape, and what LowerGraph (from_graph.h) strings together into a whole module.
// This file needs the ops (op.h), not the Graph: ir.cpp includes it, and nothing here includes
// ir.h back. The mapping per op: docs/hlo.md, "Lowering an engine graph to HLO".
// Pure functions: thread-safe.
#pragma once

#include <vector>

#include "base/status.h"
#include "engine/frontend/op.h"
#include "engine/hlo/shape.h"

namespace tpuemu::engine::hlo {

// Lowers `op` alone, `inputs` (the ops it reads, in order) as the entry's parameters, every
// instruction checked and shaped by the verifier's rules as it is written (builder.h), and returns
// the shape of what the op lowers to: how Graph::Add (ir.h) learns an op's shape from the one set
// of rules every HLO module meets, after its own checks of what the graph's ops mean
// (attributes, broadcasting, dtypes). INVALID_ARGUMENT `<kind> "<id>": <the verifier's words>`,
// e.g. `dot "logits": contracting dimension sizes differ: f32[64,128] dim 1 is 128, f32[256,10]
// dim 0 is 256`.
Result<Shape> LoweredShape(const Op& op, const std::vector<const Op*>& inputs);

}  // namespace tpuemu::engine::hlo
