#include "engine/hlo/host_memory.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "engine/hlo/evaluator_internal.h"

namespace tpuemu::engine::hlo {
namespace {

// GEMM operand planes (engine/kernels/gemm_operands.h) per operand element at `precision`: one for
// DEFAULT (bf16-rounded) and F32 (a transposed copy), two for HIGH, three for HIGHEST, each
// counted at 4 bytes (the f32 kernels' size; the bf16 ones take 2).
int64_t PlaneBytesPerElement(Precision precision) {
  switch (precision) {
    case Precision::kHigh:
      return 2 * 4;
    case Precision::kHighest:
      return 3 * 4;
    case Precision::kDefault:
    case Precision::kF32:
      break;
  }
  return 4;
}

int64_t ElementsOf(const Shape& shape) {
  std::vector<const Shape*> leaves;
  CollectLeaves(shape, leaves);
  int64_t elements = 0;
  for (const Shape* leaf : leaves) {
    if (leaf->IsArray()) elements += leaf->ElementCount();
  }
  return elements;
}

int64_t ElementBytes(const Shape& shape) { return IsFloating(shape.type) ? 4 : 8; }

bool Aliases(Opcode op) { return op == Opcode::kTuple || op == Opcode::kGetTupleElement; }

// Opcodes whose callees run as frames of their own (Evaluate's Call); the others' callees are
// scalar computations applied per element.
bool RunsCallees(Opcode op) {
  return op == Opcode::kWhile || op == Opcode::kConditional || op == Opcode::kCall ||
         op == Opcode::kFusion || op == Opcode::kAsyncStart;
}

// Transient bytes a dot or convolution allocates while it runs (eval_dot.cpp, eval_conv.cpp) at
// the run's `precision` unless the instruction names its own.
int64_t ScratchBytes(const Computation& comp, const Instruction& inst, Precision precision) {
  if ((inst.opcode != Opcode::kDot && inst.opcode != Opcode::kConvolution) ||
      inst.operands.size() < 2) {
    return 0;
  }
  const Shape& lhs = comp.instructions[static_cast<size_t>(inst.operands[0])].shape;
  const Shape& rhs = comp.instructions[static_cast<size_t>(inst.operands[1])].shape;
  const int64_t l = ElementsOf(lhs), r = ElementsOf(rhs), out = ElementsOf(inst.shape);
  const int64_t e = ElementBytes(lhs);
  const bool floating = IsFloating(lhs.type);
  const int64_t planes =
      floating ? PlaneBytesPerElement(internal::EffectivePrecision(inst.precision, precision)) : 0;
  if (inst.opcode == Opcode::kDot) {
    // A transposed copy of an operand it cannot read in place, the f32 result of a float dot
    // with an integer result (a float result is written in place), the operands' planes.
    const DotDims& d = inst.a().dot;
    int64_t bytes = planes * (l + r);
    if (!internal::DotReadsInPlace(lhs.rank(), d.lhs_batch, d.lhs_contracting, true, floating))
      bytes += e * l;
    if (!internal::DotReadsInPlace(rhs.rank(), d.rhs_batch, d.rhs_contracting, false, floating))
      bytes += e * r;
    if (floating && !IsFloating(inst.shape.type)) bytes += 4 * out;
    return bytes;
  }
  // Copies of the input and the (reversed) kernel, the canonical and f32 results, the im2col
  // matrix [output positions, window x input features] and the GEMM's planes of it and the kernel.
  const int64_t feature = inst.a().conv.kernel_output_feature;
  const int64_t cout = feature >= 0 && feature < static_cast<int64_t>(rhs.dims.size())
                           ? std::max<int64_t>(1, rhs.dims[static_cast<size_t>(feature)])
                           : 1;
  const int64_t col = (out / cout) * (r / cout);
  return e * (l + 3 * r + 2 * out + col) + planes * (col + r);
}

class Sweep {
 public:
  Sweep(const Module& module, Precision precision)
      : module_(module), precision_(precision), memo_(module.computations.size(), -1) {}

  // Peak bytes of computation `index`'s own values (its parameters alias the caller's) while one
  // device runs it, callees included.
  int64_t FramePeak(int index) {
    int64_t& memo = memo_[static_cast<size_t>(index)];
    if (memo >= 0) return memo;
    memo = 0;  // no recursion in HLO; a cycle would count its frame once
    const Computation& comp = module_.computations[static_cast<size_t>(index)];
    const size_t n = comp.instructions.size();
    std::vector<int> last(n, -1);
    for (size_t i = 0; i < n; ++i) {
      for (int o : comp.instructions[i].operands)
        last[static_cast<size_t>(o)] = static_cast<int>(i);
    }
    if (comp.root >= 0) last[static_cast<size_t>(comp.root)] = static_cast<int>(n);
    std::vector<int64_t> held(n, 0);  // bytes freed at the value's last use
    int64_t live = 0, peak = 0;
    for (size_t i = 0; i < n; ++i) {
      const Instruction& inst = comp.instructions[i];
      if (inst.opcode == Opcode::kParameter) continue;
      int64_t transient = ScratchBytes(comp, inst, precision_);
      if (RunsCallees(inst.opcode)) {
        for (int callee : inst.called) transient = std::max(transient, FramePeak(callee));
      }
      const int64_t bytes = Aliases(inst.opcode) ? 0 : HostValueBytes(inst.shape);
      peak = std::max(peak, live + transient + bytes);
      live += bytes;
      if (inst.opcode != Opcode::kConstant) held[i] = bytes;
      for (int o : inst.operands) {
        if (last[static_cast<size_t>(o)] == static_cast<int>(i)) {
          live -= std::exchange(held[static_cast<size_t>(o)], 0);
        }
      }
    }
    memo = peak;
    return peak;
  }

 private:
  const Module& module_;
  const Precision precision_;
  std::vector<int64_t> memo_;
};

}  // namespace

int64_t HostValueBytes(const Shape& shape) {
  std::vector<const Shape*> leaves;
  CollectLeaves(shape, leaves);
  int64_t bytes = 0;
  for (const Shape* leaf : leaves) {
    if (leaf->IsArray()) bytes += leaf->ElementCount() * ElementBytes(*leaf);
  }
  return bytes;
}

int64_t PeakHostBytes(const Module& module, Precision precision) {
  if (module.entry < 0 || module.computations.empty()) return 0;
  const Computation& entry = module.entry_computation();
  int64_t parameters = 0;
  for (int p : entry.parameters) {
    parameters += HostValueBytes(entry.instructions[static_cast<size_t>(p)].shape);
  }
  const int64_t result =
      entry.root >= 0 ? HostValueBytes(entry.instructions[static_cast<size_t>(entry.root)].shape)
                      : 0;
  const int64_t devices = std::max<int64_t>(1, module.devices());
  Sweep sweep(module, precision);
  // Per device: its parameters, its values at their peak, and the previous step's result.
  return devices * (parameters + sweep.FramePeak(module.entry) + result);
}

}  // namespace tpuemu::engine::hlo
