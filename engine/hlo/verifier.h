// Shape checks for a parsed module: every instruction's operand count, attributes and result
// shape against XLA's shape rules (xla/service/shape_inference.cc), and every called
// computation's signature against its caller. An instruction printed without a result shape
// (allowed for ops whose shape XLA can infer) gets the inferred one.
//
// After Verify succeeds the evaluator and the cost model may index with any attribute without
// further checks. Errors: INVALID_ARGUMENT "%name (opcode, line L): <what is wrong>", e.g.
// "%dot.3 (dot, line 12): contracting dimension sizes differ: f32[8,16] dim 1 is 16, f32[32,4]
// dim 0 is 32". Verify mutates only the inferred shapes; thread-compatible.
#pragma once

#include <vector>

#include "base/status.h"
#include "engine/hlo/module.h"

namespace tpuemu::engine::hlo {

Status Verify(Module& module);

// One instruction's check, as Verify makes it: its operands are positions in `earlier` (the
// instructions before it in its computation), its called computations positions in `module`.
// Sets inst.shape when it is unset (kInvalid). For a builder (builder.h) that checks each
// instruction as it is added.
Status CheckInstruction(const Module& module, const std::vector<Instruction>& earlier,
                        Instruction& inst);

}  // namespace tpuemu::engine::hlo
