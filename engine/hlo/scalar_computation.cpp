#include "engine/hlo/evaluator_internal.h"

namespace tpuemu::engine::hlo::internal {
namespace {

bool IsScalarArray(const Shape& s) { return s.IsArray() && s.dims.empty() && IsEvaluable(s.type); }

bool Compilable(const Computation& comp) {
  for (size_t i = 0; i < comp.instructions.size(); ++i) {
    const Instruction& inst = comp.instructions[i];
    const bool root = static_cast<int>(i) == comp.root;
    if (inst.opcode == Opcode::kTuple && root) continue;
    if (!IsScalarArray(inst.shape)) return false;
    switch (inst.opcode) {
      case Opcode::kParameter:
      case Opcode::kSelect:
      case Opcode::kClamp:
      case Opcode::kConvert:
      case Opcode::kBitcastConvert:
      case Opcode::kReducePrecision:
      case Opcode::kCopy:
      case Opcode::kBitcast:
      case Opcode::kReshape:
        continue;
      case Opcode::kConstant:
        if (!inst.literal) return false;
        continue;
      default:
        if (!IsElementwiseUnary(inst.opcode) && !IsElementwiseBinary(inst.opcode)) return false;
    }
  }
  return true;
}

}  // namespace

ScalarComputation::ScalarComputation(const Module& module, const Computation& comp,
                                     Fallback fallback)
    : comp_(comp), fallback_(std::move(fallback)) {
  (void)module;
  const Instruction& root = comp.instructions[static_cast<size_t>(comp.root)];
  results_ = root.shape.IsTuple() ? root.shape.tuple.size() : 1;
  compiled_ = Compilable(comp);
  if (!compiled_) return;
  registers_.resize(comp.instructions.size());
  ops_.resize(comp.instructions.size());
  for (size_t i = 0; i < comp.instructions.size(); ++i) {
    const Instruction& inst = comp.instructions[i];
    ops_[i] = OpOf(inst);
    if (inst.opcode == Opcode::kConstant) {
      registers_[i] = GetScalar(*inst.literal->array, 0);
    }
  }
  switch (root.opcode) {
    case Opcode::kAdd:
    case Opcode::kMultiply:
    case Opcode::kMaximum:
    case Opcode::kMinimum:
    case Opcode::kAnd:
    case Opcode::kOr:
    case Opcode::kXor: {
      if (comp.parameters.size() != 2) break;
      const Instruction& a = comp.instructions[static_cast<size_t>(root.operands[0])];
      const Instruction& b = comp.instructions[static_cast<size_t>(root.operands[1])];
      const bool params =
          a.opcode == Opcode::kParameter && b.opcode == Opcode::kParameter && a.index != b.index;
      if (params && a.shape.type == root.shape.type && b.shape.type == root.shape.type) {
        simple_ = root.opcode;
      }
      break;
    }
    default:
      break;
  }
}

Status ScalarComputation::Apply(const Scalar* args, Scalar* results) {
  if (!compiled_) {
    std::vector<Value> values;
    values.reserve(comp_.parameters.size());
    for (size_t p = 0; p < comp_.parameters.size(); ++p) {
      Array a = Array::Zeros(args[p].type, {});
      SetScalar(a, 0, args[p]);
      values.push_back(Value::Of(std::move(a)));
    }
    Result<Value> out = fallback_(std::move(values));
    if (!out.ok()) return out.status();
    if (out->is_tuple) {
      for (size_t r = 0; r < results_; ++r) results[r] = GetScalar(*out->elements[r].array, 0);
    } else {
      results[0] = GetScalar(*out->array, 0);
    }
    return Status::Ok();
  }
  for (size_t i = 0; i < comp_.instructions.size(); ++i) {
    const Instruction& inst = comp_.instructions[i];
    const auto reg = [&](size_t k) -> const Scalar& {
      return registers_[static_cast<size_t>(inst.operands[k])];
    };
    Scalar& out = registers_[i];
    switch (inst.opcode) {
      case Opcode::kParameter:
        out = args[static_cast<size_t>(inst.index)];
        break;
      case Opcode::kConstant:
      case Opcode::kTuple:
        break;
      case Opcode::kCopy:
      case Opcode::kBitcast:
      case Opcode::kReshape:
        out = reg(0);
        break;
      case Opcode::kSelect:
        out = reg(0).i != 0 ? reg(1) : reg(2);
        if (IsFloating(out.type)) out.f = RoundToType(inst.shape.type, out.f);
        out.type = inst.shape.type;
        break;
      case Opcode::kClamp: {
        const ElementwiseOp mx{Opcode::kMaximum, inst.shape.type};
        const ElementwiseOp mn{Opcode::kMinimum, inst.shape.type};
        out = ApplyBinary(mn, ApplyBinary(mx, reg(1), reg(0)), reg(2));
        break;
      }
      default:
        out = inst.operands.size() == 1 ? ApplyUnary(ops_[i], reg(0))
                                        : ApplyBinary(ops_[i], reg(0), reg(1));
    }
  }
  const Instruction& root = comp_.instructions[static_cast<size_t>(comp_.root)];
  if (root.opcode == Opcode::kTuple) {
    for (size_t r = 0; r < results_; ++r) {
      results[r] = registers_[static_cast<size_t>(root.operands[r])];
    }
  } else {
    results[0] = registers_[static_cast<size_t>(comp_.root)];
  }
  return Status::Ok();
}

}  // namespace tpuemu::engine::hlo::internal
