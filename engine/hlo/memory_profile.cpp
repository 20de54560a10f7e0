// Peak HBM bytes by liveness over a computation's instruction order (the order XLA schedules a
// module with is_scheduled=true; a good-enough order otherwise): parameters and constants live
// throughout, every other materialized result from its definition to its last use, aliases
// (tuple, get-tuple-element, bitcast) and fused producers add nothing, and a control-flow
// instruction adds its callee's own temporaries at that point.
#include <algorithm>

#include "engine/hlo/cost_model_internal.h"

namespace tpuemu::engine::hlo::internal {
namespace {

int64_t LeafBytes(const Shape& s) {
  std::vector<const Shape*> leaves;
  CollectLeaves(s, leaves);
  int64_t bytes = 0;
  for (const Shape* l : leaves) bytes += l->ByteSize();
  return bytes;
}

bool Alias(Opcode op) {
  return op == Opcode::kTuple || op == Opcode::kGetTupleElement || op == Opcode::kBitcast ||
         op == Opcode::kAddDependency || op == Opcode::kOptimizationBarrier ||
         op == Opcode::kDomain || op == Opcode::kAfterAll || op == Opcode::kAsyncUpdate ||
         op == Opcode::kAsyncDone || op == Opcode::kAllReduceDone || op == Opcode::kAllGatherDone ||
         op == Opcode::kCollectivePermuteDone || op == Opcode::kCopyDone;
}

int64_t ParameterBytes(const Computation& comp) {
  int64_t bytes = 0;
  for (int p : comp.parameters) bytes += LeafBytes(comp.instructions[static_cast<size_t>(p)].shape);
  return bytes;
}

}  // namespace

int64_t PeakBytes(const Module& module, int index, std::vector<int64_t>& memo, PeakAt* at) {
  if (at == nullptr && memo[static_cast<size_t>(index)] >= 0) {
    return memo[static_cast<size_t>(index)];
  }
  const Computation& comp = module.computations[static_cast<size_t>(index)];
  const std::vector<bool> fused = FusedProducers(module, comp);
  const size_t n = comp.instructions.size();
  std::vector<int64_t> size(n, 0);
  std::vector<int> last(n, -1);
  int64_t live = 0;
  for (size_t i = 0; i < n; ++i) {
    const Instruction& inst = comp.instructions[i];
    for (int o : inst.operands) last[static_cast<size_t>(o)] = static_cast<int>(i);
    if (Alias(inst.opcode) || fused[i]) continue;
    size[i] = LeafBytes(inst.shape);
    if (inst.opcode == Opcode::kParameter || inst.opcode == Opcode::kConstant) live += size[i];
  }
  last[static_cast<size_t>(comp.root)] = static_cast<int>(n);
  std::vector<int64_t> bytes;  // for `at`: size[] is zeroed as results die
  if (at != nullptr) bytes = size;
  int64_t peak = live;
  int peak_index = 0;
  for (size_t i = 0; i < n; ++i) {
    const Instruction& inst = comp.instructions[i];
    int64_t transient = 0;
    if (IsControlFlow(inst.opcode)) {
      for (int c : inst.called) {
        const int64_t inner = PeakBytes(module, c, memo) -
                              ParameterBytes(module.computations[static_cast<size_t>(c)]);
        transient = std::max(transient, inner);
      }
    }
    const bool resident = inst.opcode == Opcode::kParameter || inst.opcode == Opcode::kConstant;
    if (!resident) live += size[i];
    if (live + transient > peak) {
      peak = live + transient;
      peak_index = static_cast<int>(i);
    }
    for (int o : inst.operands) {
      const auto u = static_cast<size_t>(o);
      const Opcode op = comp.instructions[u].opcode;
      if (last[u] == static_cast<int>(i) && op != Opcode::kParameter && op != Opcode::kConstant) {
        live -= size[u];
        size[u] = 0;  // an operand used twice by this instruction is freed once
      }
    }
  }
  memo[static_cast<size_t>(index)] = peak;
  if (at != nullptr) {
    at->instruction = peak_index;
    at->live.clear();
    for (size_t i = 0; i < n; ++i) {
      const Opcode op = comp.instructions[i].opcode;
      const bool resident = op == Opcode::kParameter || op == Opcode::kConstant;
      const bool alive = resident || (static_cast<int>(i) <= peak_index && last[i] >= peak_index);
      if (bytes[i] > 0 && alive) at->live.push_back(static_cast<int>(i));
    }
    std::stable_sort(at->live.begin(), at->live.end(), [&bytes](int a, int b) {
      return bytes[static_cast<size_t>(a)] > bytes[static_cast<size_t>(b)];
    });
  }
  return peak;
}

}  // namespace tpuemu::engine::hlo::internal
