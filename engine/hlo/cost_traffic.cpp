// HBM traffic at fusion boundaries. After optimizations, XLA's fusions are the kernels: each
// top-level instruction reads its array operands and writes its result. Before optimizations,
// the fusion rule below stands in for XLA's: an elementwise producer (elementwise maps,
// broadcast, iota, convert, reshape, ...) whose users all fuse with it stays on chip.
#include <algorithm>
#include <cmath>

#include "engine/hlo/cost_model_internal.h"

namespace tpuemu::engine::hlo::internal {
namespace {

bool FusibleProducer(const Instruction& inst) {
  const Opcode op = inst.opcode;
  if (!inst.shape.IsArray()) return false;
  if (IsElementwiseUnary(op) || IsElementwiseBinary(op)) return true;
  switch (op) {
    case Opcode::kSelect:
    case Opcode::kClamp:
    case Opcode::kConvert:
    case Opcode::kBitcastConvert:
    case Opcode::kReducePrecision:
    case Opcode::kBroadcast:
    case Opcode::kIota:
    case Opcode::kReshape:
    case Opcode::kCopy:
      return true;
    default:
      return false;
  }
}

bool FusibleConsumer(const Instruction& inst) {
  switch (inst.opcode) {
    case Opcode::kReduce:
    case Opcode::kReduceWindow:
    case Opcode::kDot:
    case Opcode::kConvolution:
    case Opcode::kTranspose:
    case Opcode::kSlice:
    case Opcode::kConcatenate:
    case Opcode::kPad:
      return true;
    default:
      return FusibleProducer(inst);
  }
}

double ArrayBytes(const Shape& s) { return s.IsArray() ? static_cast<double>(s.ByteSize()) : 0; }

}  // namespace

std::vector<bool> FusedProducers(const Module& module, const Computation& comp) {
  const size_t n = comp.instructions.size();
  std::vector<bool> fused(n, false);
  if (module.has_fusions) return fused;
  std::vector<int> users(n, 0);
  std::vector<bool> all_fusible(n, true);
  for (const Instruction& inst : comp.instructions) {
    for (int o : inst.operands) {
      ++users[static_cast<size_t>(o)];
      if (!FusibleConsumer(inst)) all_fusible[static_cast<size_t>(o)] = false;
    }
  }
  for (size_t i = 0; i < n; ++i) {
    fused[i] = static_cast<int>(i) != comp.root && users[i] > 0 && all_fusible[i] &&
               FusibleProducer(comp.instructions[i]);
  }
  return fused;
}

double Traffic(const Computation& comp, int index, const std::vector<bool>& fused) {
  const Instruction& inst = comp.instructions[static_cast<size_t>(index)];
  double bytes = 0;
  for (int o : inst.operands) {
    if (!fused[static_cast<size_t>(o)]) {
      bytes += ArrayBytes(comp.instructions[static_cast<size_t>(o)].shape);
    }
  }
  if (!fused[static_cast<size_t>(index)]) {
    std::vector<const Shape*> leaves;
    CollectLeaves(inst.shape, leaves);
    for (const Shape* s : leaves) bytes += ArrayBytes(*s);
  }
  return bytes;
}

}  // namespace tpuemu::engine::hlo::internal
