// Loop fusion at run time: chains of f32 elementwise instructions (unary and binary maps,
// compares, selects) over one shape, and the scalar broadcasts they read, run as one loop over
// blocks of elements, as XLA fuses them into one kernel. The intermediates live in a few KiB of
// registers per thread instead of a fresh array each (a GELU's fourteen ops read and wrote 4 MiB
// arrays fourteen times), and a broadcast constant is never materialised when only fused ops
// read it. Every element is computed by the functions the unfused kernels use
// (engine/hlo/elementwise.h's MapBlockF32), so fusion changes no bit. Members share registers
// once their values are dead. A group that is a whole GELU or GELU gradient runs as one compiled
// kernel instead, with the same bits: fused_kernels.h, above this file, matches the plan's groups
// against its templates (PlanFusedLoops) and runs them (RunFusedGroup); it plans its templates
// with PlanLoopFusion itself, so this file knows nothing of it.
//
// The plan is made once per computation. An instruction joins the open group of an operand
// with its shape (the open groups of several operands merge there); a group closes once an
// instruction outside it reads one of its members, so it can run where its last member stands
// without reordering anything that reads it. Internal to
// the evaluator (evaluator.cpp); thread-compatible.
#pragma once

#include <functional>
#include <vector>

#include "base/status.h"
#include "engine/hlo/array.h"
#include "engine/hlo/module.h"
#include "engine/runtime/parallel.h"

namespace tpuemu::engine::hlo::internal {

// A compiled kernel a whole group can run as (fused_kernels.h).
enum class FusedKernel { kNone, kGelu, kGeluGrad };
struct FusedKernelCall {
  FusedKernel kernel = FusedKernel::kNone;
  std::vector<int> inputs;  // the kernel's arguments: instruction indices of the group's inputs
};

struct LoopGroup {
  std::vector<int64_t> dims;  // every member's shape
  std::vector<int> members;   // instruction indices, in order
  int at = -1;                // where the group runs: its last member
  std::vector<int> outputs;   // members read outside the group (or the root): materialised
  FusedKernelCall kernel;     // set by fused_kernels.h's PlanFusedLoops when the whole group is
                              // one of its templates
};

struct LoopFusionPlan {
  std::vector<int> group_of;         // per instruction: its group, or -1
  std::vector<bool> unmaterialised;  // broadcasts only fused members read (IsSplat): never built
  std::vector<LoopGroup> groups;
  // Per instruction: the last instruction that needs its value (a fused member's reads count
  // where its group runs); the root's is the instruction count.
  std::vector<int> last_use;
  std::vector<std::vector<int>> released_after;  // per instruction: values whose last use it is
};

// With fuse false: no groups, only the last uses. No group gets a kernel here (PlanFusedLoops,
// fused_kernels.h, does that).
LoopFusionPlan PlanLoopFusion(const Computation& comp, bool fuse = true);

// Runs group g of `plan` member by member (its kernel, if it has one, is RunFusedGroup's to run:
// fused_kernels.h); value_of(i) is the array of instruction i (an input of the group or
// the scalar operand of a broadcast it reads). Returns the outputs in g.outputs' order.
// CANCELLED when the parallel context's token stops it.
Result<std::vector<Array>> RunLoopGroup(const Computation& comp, const LoopFusionPlan& plan, int g,
                                        const std::function<const Array&(int)>& value_of,
                                        const ParallelContext& parallel);

}  // namespace tpuemu::engine::hlo::internal
