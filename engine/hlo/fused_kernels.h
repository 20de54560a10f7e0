// Fused loops the engine has one compiled kernel for. A loop-fusion group (loop_fusion.h) whose
// expression is exactly the tanh-GELU or its gradient as the graph lowering writes them
// (engine/frontend/op_lowering_ops.cpp, in engine/kernels/vector_math.h's order) runs
// engine/kernels/vector_math.h's GeluArray / GeluGradArray: one pass with every intermediate in
// registers instead of one pass per instruction over a block. The kernels compute each element by
// the same float operations in the same order, so the bits are those of the
// instruction-by-instruction loop (tested in tests/engine/hlo/loop_fusion_test.cpp); any other
// expression, even an algebraically equal one, runs member by member.
//
// The expressions are HLO text in fused_kernels.cpp, planned by PlanLoopFusion itself; a group
// matches when its opcodes, wiring, scalar constants and single output are the template's.
// This file sits above loop_fusion.h (it plans its templates with PlanLoopFusion): the evaluator
// plans with PlanFusedLoops and runs groups with RunFusedGroup, which add the kernels to
// loop_fusion.h's plan and loop. Internal to the evaluator; thread-safe (the templates are built
// once).
#pragma once

#include "engine/hlo/loop_fusion.h"

namespace tpuemu::engine::hlo::internal {

// PlanLoopFusion(comp, fuse) with every group whose expression is one of the templates given its
// kernel (LoopGroup::kernel): the plan the evaluator runs.
LoopFusionPlan PlanFusedLoops(const Computation& comp, bool fuse = true);

// Runs group g of `plan`: its kernel when it has one, else member by member (RunLoopGroup, whose
// contract this keeps: outputs in g.outputs' order, CANCELLED when the token stops it).
Result<std::vector<Array>> RunFusedGroup(const Computation& comp, const LoopFusionPlan& plan, int g,
                                         const std::function<const Array&(int)>& value_of,
                                         const ParallelContext& parallel);

}  // namespace tpuemu::engine::hlo::internal
