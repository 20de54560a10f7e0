#include "engine/hlo/verifier.h"

#include <algorithm>
#include <limits>

#include "engine/hlo/verifier_internal.h"

namespace tpuemu::engine::hlo {
namespace internal {

Status Bad(const Instruction& inst, const std::string& message) {
  return Status::InvalidArgument(inst.Describe() + ": " + message);
}

bool IsScalar(const Shape& s) { return s.IsArray() && s.dims.empty(); }

std::string Dims(const std::vector<int64_t>& dims) {
  std::string out = "{";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) out += ",";
    out += std::to_string(dims[i]);
  }
  return out + "}";
}

bool ValidDims(const std::vector<int64_t>& dims, int64_t rank) {
  std::vector<bool> seen(static_cast<size_t>(std::max<int64_t>(rank, 0)), false);
  for (int64_t d : dims) {
    if (d < 0 || d >= rank || seen[static_cast<size_t>(d)]) return false;
    seen[static_cast<size_t>(d)] = true;
  }
  return true;
}

Result<Shape> Declared(const InferContext& c) {
  if (c.inst.shape.type == PrimitiveType::kInvalid) {
    return Bad(c.inst, "this opcode needs its result shape written before it");
  }
  return c.inst.shape;
}

Status OperandCount(const InferContext& c, int exact, int min) {
  const int n = static_cast<int>(c.operands.size());
  if (exact >= 0 && n != exact) {
    return Bad(c.inst,
               "expected " + std::to_string(exact) + " operand(s), found " + std::to_string(n));
  }
  if (exact < 0 && n < min) {
    return Bad(c.inst, "expected at least " + std::to_string(min) + " operand(s), found " +
                           std::to_string(n));
  }
  return Status::Ok();
}

Status ArrayOperands(const InferContext& c) {
  for (size_t i = 0; i < c.operands.size(); ++i) {
    if (!c.operands[i]->IsArray()) {
      return Bad(c.inst, "operand " + std::to_string(i) + " must be an array, found " +
                             c.operands[i]->ToString());
    }
  }
  return Status::Ok();
}

Result<const Computation*> Called(const InferContext& c, size_t slot, const char* role) {
  if (slot >= c.inst.called.size() || c.inst.called[slot] < 0) {
    return Bad(c.inst, std::string("missing attribute ") + role + "=");
  }
  return &c.module.computations[static_cast<size_t>(c.inst.called[slot])];
}

const Shape& RootShape(const Computation& comp) {
  return comp.instructions[static_cast<size_t>(comp.root)].shape;
}

Result<Shape> CheckSignature(const InferContext& c, const Computation& comp,
                             const std::vector<Shape>& params, const char* role) {
  if (comp.parameters.size() != params.size()) {
    return Bad(c.inst, std::string(role) + " %" + comp.name + " takes " +
                           std::to_string(comp.parameters.size()) + " parameter(s), expected " +
                           std::to_string(params.size()));
  }
  for (size_t i = 0; i < params.size(); ++i) {
    const Shape& p = comp.instructions[static_cast<size_t>(comp.parameters[i])].shape;
    const bool floats = p.IsArray() && params[i].IsArray() && IsFloating(p.type) &&
                        IsFloating(params[i].type) && p.dims == params[i].dims;
    if (!Compatible(p, params[i]) && !floats) {
      return Bad(c.inst, std::string(role) + " %" + comp.name + " parameter " + std::to_string(i) +
                             " is " + p.ToString() + ", expected " + params[i].ToString());
    }
  }
  return RootShape(comp);
}

// tuple, get-tuple-element, while, conditional, call, fusion, async-*, parameters and constants.
Result<Shape> InferControlFlow(const InferContext& c) {
  const Instruction& inst = c.inst;
  switch (inst.opcode) {
    case Opcode::kTuple: {
      std::vector<Shape> elements;
      for (const Shape* s : c.operands) elements.push_back(*s);
      return Shape::Tuple(std::move(elements));
    }
    case Opcode::kGetTupleElement: {
      TPUEMU_RETURN_IF_ERROR(OperandCount(c, 1));
      const Shape& t = *c.operands[0];
      if (!t.IsTuple()) return Bad(inst, "operand is not a tuple: " + t.ToString());
      if (inst.index < 0 || inst.index >= static_cast<int64_t>(t.tuple.size())) {
        return Bad(inst, "index=" + std::to_string(inst.index) + " is outside " + t.ToString());
      }
      return t.tuple[static_cast<size_t>(inst.index)];
    }
    case Opcode::kWhile: {
      TPUEMU_RETURN_IF_ERROR(OperandCount(c, 1));
      auto cond = Called(c, 0, "condition");
      if (!cond.ok()) return cond.status();
      auto body = Called(c, 1, "body");
      if (!body.ok()) return body.status();
      auto cond_root = CheckSignature(c, **cond, {*c.operands[0]}, "condition");
      if (!cond_root.ok()) return cond_root.status();
      if (!Compatible(*cond_root, Shape::Array(PrimitiveType::kPred, {}))) {
        return Bad(inst, "condition must return pred[], returns " + cond_root->ToString());
      }
      auto body_root = CheckSignature(c, **body, {*c.operands[0]}, "body");
      if (!body_root.ok()) return body_root.status();
      if (!Compatible(*body_root, *c.operands[0])) {
        return Bad(inst, "body returns " + body_root->ToString() + ", the loop state is " +
                             c.operands[0]->ToString());
      }
      return *c.operands[0];
    }
    case Opcode::kConditional: {
      TPUEMU_RETURN_IF_ERROR(OperandCount(c, -1, 1));
      const Shape& index = *c.operands[0];
      const bool pred = Compatible(index, Shape::Array(PrimitiveType::kPred, {}));
      if (!pred && !Compatible(index, Shape::Array(PrimitiveType::kS32, {}))) {
        return Bad(inst, "the branch index must be pred[] or s32[], found " + index.ToString());
      }
      const size_t branches = inst.called.size();
      if (branches == 0 || (pred && branches != 2) || branches + 1 != c.operands.size()) {
        return Bad(inst, std::to_string(branches) + " branch computation(s) for " +
                             std::to_string(c.operands.size() - 1) + " branch operand(s)");
      }
      Shape result;
      for (size_t b = 0; b < branches; ++b) {
        auto comp = Called(c, b, "branch_computations");
        if (!comp.ok()) return comp.status();
        auto root = CheckSignature(c, **comp, {*c.operands[b + 1]}, "branch");
        if (!root.ok()) return root.status();
        if (b == 0) result = *root;
        if (!Compatible(result, *root)) {
          return Bad(inst, "branches return different shapes: " + result.ToString() + " and " +
                               root->ToString());
        }
      }
      return result;
    }
    case Opcode::kCall:
    case Opcode::kFusion: {
      auto comp = Called(c, 0, inst.opcode == Opcode::kCall ? "to_apply" : "calls");
      if (!comp.ok()) return comp.status();
      std::vector<Shape> params;
      for (const Shape* s : c.operands) params.push_back(*s);
      return CheckSignature(c, **comp, params, "called computation");
    }
    case Opcode::kAsyncStart: {
      auto declared = Declared(c);
      if (!declared.ok()) return declared;
      if (!declared->IsTuple() || declared->tuple.size() < 2) {
        return Bad(inst, "async-start returns ((operands), result, ...)");
      }
      if (!inst.a().async_wrapped) {
        auto comp = Called(c, 0, "calls");
        if (!comp.ok()) return comp.status();
        std::vector<Shape> params;
        for (const Shape* s : c.operands) params.push_back(*s);
        auto root = CheckSignature(c, **comp, params, "async computation");
        if (!root.ok()) return root.status();
        if (!Compatible(*root, declared->tuple[1])) {
          return Bad(inst, "the async computation returns " + root->ToString() +
                               ", the result slot is " + declared->tuple[1].ToString());
        }
      }
      return declared;
    }
    case Opcode::kAsyncUpdate:
    case Opcode::kAsyncDone: {
      TPUEMU_RETURN_IF_ERROR(OperandCount(c, 1));
      const Shape& s = *c.operands[0];
      if (!s.IsTuple() || s.tuple.size() < 2) {
        return Bad(inst, "operand is not an async-start: " + s.ToString());
      }
      return inst.opcode == Opcode::kAsyncUpdate ? s : s.tuple[1];
    }
    case Opcode::kParameter:
      return Declared(c);
    case Opcode::kConstant:
      if (inst.literal && !Compatible(inst.literal->shape(), inst.shape) &&
          IsEvaluable(inst.shape.type)) {
        return Bad(inst, "the literal does not match the shape " + inst.shape.ToString());
      }
      return Declared(c);
    case Opcode::kAfterAll:
      return Shape::Array(PrimitiveType::kToken, {});
    case Opcode::kAddDependency:
      TPUEMU_RETURN_IF_ERROR(OperandCount(c, 2));
      return *c.operands[0];
    case Opcode::kOptimizationBarrier:
    case Opcode::kDomain:
      TPUEMU_RETURN_IF_ERROR(OperandCount(c, 1));
      return *c.operands[0];
    default:
      if (inst.IsPassThroughCustomCall() && !Compatible(*c.operands[0], inst.shape)) {
        return Bad(inst, "a " + inst.a().custom_call_target +
                             " custom-call must return its operand's shape " +
                             c.operands[0]->ToString());
      }
      // custom-call and the other opcodes the evaluator does not run: trust the text.
      return Declared(c);
  }
}

Result<Shape> Infer(const InferContext& c) {
  const Opcode op = c.inst.opcode;
  if (IsElementwiseUnary(op) || IsElementwiseBinary(op) || op == Opcode::kSelect ||
      op == Opcode::kClamp || op == Opcode::kConvert || op == Opcode::kBitcastConvert ||
      op == Opcode::kReducePrecision || op == Opcode::kIota || op == Opcode::kRng ||
      op == Opcode::kRngBitGenerator || op == Opcode::kRngGetAndUpdateState ||
      op == Opcode::kReplicaId || op == Opcode::kPartitionId || op == Opcode::kGetDimensionSize ||
      op == Opcode::kBatchNormTraining || op == Opcode::kBatchNormInference ||
      op == Opcode::kBatchNormGrad) {
    return InferElementwise(c);
  }
  switch (op) {
    case Opcode::kBroadcast:
    case Opcode::kReshape:
    case Opcode::kBitcast:
    case Opcode::kCopy:
    case Opcode::kCopyStart:
    case Opcode::kCopyDone:
    case Opcode::kTranspose:
    case Opcode::kReverse:
    case Opcode::kSlice:
    case Opcode::kDynamicSlice:
    case Opcode::kDynamicUpdateSlice:
    case Opcode::kConcatenate:
    case Opcode::kPad:
      return InferDataMovement(c);
    case Opcode::kDot:
    case Opcode::kConvolution:
      return InferDotOrConvolution(c);
    case Opcode::kGather:
    case Opcode::kScatter:
      return InferGatherOrScatter(c);
    case Opcode::kReduce:
    case Opcode::kReduceWindow:
    case Opcode::kSelectAndScatter:
    case Opcode::kSort:
    case Opcode::kTopK:
    case Opcode::kMap:
      return InferReduction(c);
    default:
      break;
  }
  if (IsCollective(op) || op == Opcode::kAllReduceDone || op == Opcode::kAllGatherDone ||
      op == Opcode::kCollectivePermuteDone) {
    return InferCollective(c);
  }
  return InferControlFlow(c);
}

// Array leaves whose element count overflows int64 (a "?" dimension counts as 1 here).
Status CheckElementCount(const Instruction& inst, const Shape& shape) {
  std::vector<const Shape*> leaves;
  CollectLeaves(shape, leaves);
  for (const Shape* s : leaves) {
    int64_t n = 1;
    for (int64_t d : s->dims) {
      const int64_t dim = std::max<int64_t>(d, 1);
      if (n > std::numeric_limits<int64_t>::max() / dim) {
        return Bad(inst, s->ToString() + " has more elements than an int64 counts");
      }
      n *= dim;
    }
  }
  return Status::Ok();
}

}  // namespace internal

Status CheckInstruction(const Module& module, const std::vector<Instruction>& earlier,
                        Instruction& inst) {
  using namespace internal;
  TPUEMU_RETURN_IF_ERROR(CheckElementCount(inst, inst.shape));
  InferContext c{module, inst, {}};
  for (int o : inst.operands) c.operands.push_back(&earlier[static_cast<size_t>(o)].shape);
  Result<Shape> shape = Infer(c);
  if (!shape.ok()) return shape.status();
  if (inst.shape.type == PrimitiveType::kInvalid) {
    TPUEMU_RETURN_IF_ERROR(CheckElementCount(inst, *shape));
    inst.shape = std::move(*shape);
  } else if (!Compatible(inst.shape, *shape)) {
    return Bad(inst, "the result shape is " + inst.shape.ToString() + " but the operands give " +
                         shape->ToString());
  }
  return Status::Ok();
}

namespace internal {

Status VerifyComputation(Module& module, Computation& comp) {
  if (comp.instructions.empty() || comp.root < 0) {
    return Status::InvalidArgument("computation %" + comp.name + " has no instructions");
  }
  for (Instruction& inst : comp.instructions) {
    TPUEMU_RETURN_IF_ERROR(CheckInstruction(module, comp.instructions, inst));
  }
  return Status::Ok();
}

}  // namespace internal

Status Verify(Module& module) {
  // Callees are defined before their callers, so index order verifies a callee first.
  for (Computation& comp : module.computations) {
    TPUEMU_RETURN_IF_ERROR(internal::VerifyComputation(module, comp));
  }
  for (const Computation& comp : module.computations) {
    for (const Instruction& inst : comp.instructions) {
      if (inst.opcode == Opcode::kFusion) module.has_fusions = true;
    }
  }
  return Status::Ok();
}

}  // namespace tpuemu::engine::hlo
