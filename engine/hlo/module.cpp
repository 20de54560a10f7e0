#include "engine/hlo/module.h"

namespace tpuemu::engine::hlo {

const Attributes& Instruction::a() const {
  static const Attributes kEmpty;
  return attrs ? *attrs : kEmpty;
}

Attributes& Instruction::mutable_attrs() {
  if (!attrs) attrs = std::make_unique<Attributes>();
  return *attrs;
}

std::string Instruction::Describe() const {
  // Built instructions (builder.h) have no line.
  const std::string where = line > 0 ? ", line " + std::to_string(line) : "";
  return "%" + name + " (" + std::string(OpcodeName(opcode)) + where + ")";
}

bool Instruction::IsPassThroughCustomCall() const {
  if (opcode != Opcode::kCustomCall || operands.size() != 1) return false;
  const std::string& t = a().custom_call_target;
  return t == "Sharding" || t == "MoveToHost" || t == "MoveToDevice";
}

int64_t WindowDim::OutputSize(int64_t in) const {
  const int64_t padded = (in == 0 ? 0 : (in - 1) * base_dilation + 1) + pad_low + pad_high;
  const int64_t span = (size - 1) * window_dilation + 1;
  return padded < span ? 0 : (padded - span) / stride + 1;
}

std::string Instruction::Unsupported() const {
  if (IsPassThroughCustomCall()) return {};
  if (opcode == Opcode::kCustomCall) return "custom-call target \"" + a().custom_call_target + "\"";
  if (!IsEvaluatorSupported(opcode)) return "opcode " + std::string(OpcodeName(opcode));
  if (opcode == Opcode::kDot && !a().sparsity.empty()) {
    return "sparse dot (sparsity=" + a().sparsity + ")";
  }
  return {};
}

int Module::FindComputation(const std::string& name) const {
  for (size_t i = 0; i < computations.size(); ++i) {
    if (computations[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace tpuemu::engine::hlo
