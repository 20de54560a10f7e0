// Fused loops the engine has one compiled kernel for. A loop-fusion group (loop_fusion.h) whose
// expression is exactly the tanh-GELU or its gradient as the graph lowering writes them
// (engine/frontend/from_graph_ops.cpp, in engine/kernels/vector_math.h's order) runs
// engine/kernels/vector_math.h's GeluArray / GeluGradArray: one pass with every intermediate in
// registers instead of one pass per instruction over a block. The kernels compute each element by
// the same float operations in the same order, so the bits are those of the
// instruction-by-instruction loop (tested in tests/engine/hlo/loop_fusion_test.cpp); any other
// expression, even an algebraically equal one, runs member by member.
//
// The expressions are HLO text in fused_kernels.cpp, planned by PlanLoopFusion itself; a group
// matches when its opcodes, wiring, scalar constants and single output are the template's.
// Internal to the evaluator; thread-safe (the templates are built once).
#pragma once

#include "engine/hlo/loop_fusion.h"

namespace tpuemu::engine::hlo::internal {

// The kernel for group `group` of `plan` over `comp`, with the group's inputs in the kernel's
// argument order; FusedKernel::kNone when its expression is not one of the templates.
FusedKernelCall MatchFusedKernel(const Computation& comp, const LoopFusionPlan& plan,
                                 const LoopGroup& group);

// Runs a matched group: out = the kernel over inputs (each the group's element count), in chunks
// on `parallel`. False when the parallel context's token stopped it.
bool RunFusedKernel(FusedKernel kernel, const std::vector<const float*>& inputs, float* out,
                    int64_t n, const ParallelContext& parallel);

}  // namespace tpuemu::engine::hlo::internal
