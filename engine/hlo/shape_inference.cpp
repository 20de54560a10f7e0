// Shape rules of the elementwise ops and the data-movement ops (xla/service/shape_inference.cc).
#include <algorithm>

#include "engine/hlo/verifier_internal.h"

namespace tpuemu::engine::hlo::internal {
namespace {

bool FloatOnly(Opcode op) {
  switch (op) {
    case Opcode::kCeil:
    case Opcode::kFloor:
    case Opcode::kRoundNearestAfz:
    case Opcode::kRoundNearestEven:
    case Opcode::kRsqrt:
    case Opcode::kSqrt:
    case Opcode::kIsFinite:
    case Opcode::kAtan2:
      return true;
    default:
      return IsTranscendental(op) && op != Opcode::kPower;
  }
}

bool IntOrPredOnly(Opcode op) {
  return op == Opcode::kAnd || op == Opcode::kOr || op == Opcode::kXor || op == Opcode::kNot;
}

bool IntOnly(Opcode op) {
  return op == Opcode::kShiftLeft || op == Opcode::kShiftRightArithmetic ||
         op == Opcode::kShiftRightLogical || op == Opcode::kClz || op == Opcode::kPopulationCount;
}

Status CheckKind(const InferContext& c, PrimitiveType t) {
  const Opcode op = c.inst.opcode;
  if (FloatOnly(op) && !IsFloating(t) && !IsComplex(t)) {
    return Bad(c.inst, "needs floating-point operands, found " + std::string(PrimitiveTypeName(t)));
  }
  if (IntOrPredOnly(op) && !IsInteger(t) && t != PrimitiveType::kPred) {
    return Bad(c.inst,
               "needs integer or pred operands, found " + std::string(PrimitiveTypeName(t)));
  }
  if (IntOnly(op) && !IsInteger(t)) {
    return Bad(c.inst, "needs integer operands, found " + std::string(PrimitiveTypeName(t)));
  }
  return Status::Ok();
}

// Both floating (any precisions) or the same type.
bool SameKind(PrimitiveType a, PrimitiveType b) {
  return a == b || (IsFloating(a) && IsFloating(b));
}

Status SameDims(const InferContext& c, const Shape& a, const Shape& b) {
  if (a.dims != b.dims) {
    return Bad(c.inst, "operand shapes differ: " + a.ToString() + " and " + b.ToString() +
                           " (HLO needs an explicit broadcast)");
  }
  return Status::Ok();
}

}  // namespace

Result<Shape> InferElementwise(const InferContext& c) {
  const Instruction& inst = c.inst;
  const Opcode op = inst.opcode;
  TPUEMU_RETURN_IF_ERROR(ArrayOperands(c));
  if (IsElementwiseUnary(op) || op == Opcode::kReducePrecision) {
    TPUEMU_RETURN_IF_ERROR(OperandCount(c, 1));
    const Shape& x = *c.operands[0];
    TPUEMU_RETURN_IF_ERROR(CheckKind(c, x.type));
    if (op == Opcode::kReducePrecision) {
      const Attributes& a = inst.a();
      if (!IsFloating(x.type)) return Bad(inst, "reduce-precision needs a floating-point operand");
      if (a.exponent_bits < 1 || a.exponent_bits > 30 || a.mantissa_bits < 0 ||
          a.mantissa_bits > 52) {
        return Bad(inst, "exponent_bits must be 1..30 and mantissa_bits 0..52");
      }
    }
    Shape out = Shape::Array(op == Opcode::kIsFinite ? PrimitiveType::kPred : x.type, x.dims);
    out.dynamic = x.dynamic;
    return out;
  }
  if (IsElementwiseBinary(op)) {
    TPUEMU_RETURN_IF_ERROR(OperandCount(c, 2));
    const Shape& a = *c.operands[0];
    const Shape& b = *c.operands[1];
    TPUEMU_RETURN_IF_ERROR(SameDims(c, a, b));
    if (!SameKind(a.type, b.type)) {
      return Bad(inst, "operand element types differ: " + a.ToString() + " and " + b.ToString());
    }
    TPUEMU_RETURN_IF_ERROR(CheckKind(c, a.type));
    if (op == Opcode::kCompare) {
      if (!inst.a().has_direction) return Bad(inst, "missing attribute direction=");
      return Shape::Array(PrimitiveType::kPred, a.dims);
    }
    // Mixed float precisions: the text's result type wins (XLA allows it after some passes).
    if (a.type != b.type && inst.shape.IsArray()) return Shape::Array(inst.shape.type, a.dims);
    return Shape::Array(a.type, a.dims);
  }
  switch (op) {
    case Opcode::kSelect: {
      TPUEMU_RETURN_IF_ERROR(OperandCount(c, 3));
      const Shape& p = *c.operands[0];
      if (p.type != PrimitiveType::kPred) return Bad(inst, "the selector must be pred");
      if (!IsScalar(p)) TPUEMU_RETURN_IF_ERROR(SameDims(c, p, *c.operands[1]));
      TPUEMU_RETURN_IF_ERROR(SameDims(c, *c.operands[1], *c.operands[2]));
      if (!SameKind(c.operands[1]->type, c.operands[2]->type)) {
        return Bad(inst, "on_true and on_false element types differ");
      }
      return *c.operands[1];
    }
    case Opcode::kClamp: {
      TPUEMU_RETURN_IF_ERROR(OperandCount(c, 3));
      const Shape& x = *c.operands[1];
      for (int i : {0, 2}) {
        const Shape& bound = *c.operands[static_cast<size_t>(i)];
        if (!IsScalar(bound)) TPUEMU_RETURN_IF_ERROR(SameDims(c, bound, x));
        if (!SameKind(bound.type, x.type)) return Bad(inst, "clamp bounds have another type");
      }
      return Shape::Array(x.type, x.dims);
    }
    case Opcode::kConvert:
    case Opcode::kBitcastConvert: {
      TPUEMU_RETURN_IF_ERROR(OperandCount(c, 1));
      auto out = Declared(c);
      if (!out.ok()) return out;
      if (!out->IsArray() || out->dims != c.operands[0]->dims) {
        return Bad(inst, "converting " + c.operands[0]->ToString() + " to " + out->ToString() +
                             " changes the dimensions");
      }
      if (op == Opcode::kBitcastConvert && BitWidth(out->type) != BitWidth(c.operands[0]->type)) {
        return Bad(inst,
                   "bitcast-convert between element types of different widths is not "
                   "supported");
      }
      return out;
    }
    case Opcode::kIota: {
      TPUEMU_RETURN_IF_ERROR(OperandCount(c, 0));
      auto out = Declared(c);
      if (!out.ok()) return out;
      if (!out->IsArray() || inst.index < 0 || inst.index >= out->rank()) {
        return Bad(inst, "iota_dimension=" + std::to_string(inst.index) + " is outside " +
                             out->ToString());
      }
      return out;
    }
    case Opcode::kReplicaId:
    case Opcode::kPartitionId:
      TPUEMU_RETURN_IF_ERROR(OperandCount(c, 0));
      return Shape::Array(PrimitiveType::kU32, {});
    case Opcode::kGetDimensionSize: {
      TPUEMU_RETURN_IF_ERROR(OperandCount(c, 1));
      if (inst.dimensions.size() != 1 || !ValidDims(inst.dimensions, c.operands[0]->rank())) {
        return Bad(inst, "dimensions= must name one dimension of the operand");
      }
      return Shape::Array(PrimitiveType::kS32, {});
    }
    case Opcode::kRng: {
      TPUEMU_RETURN_IF_ERROR(OperandCount(c, 2));
      const std::string& d = inst.a().distribution;
      if (d != "rng_uniform" && d != "rng_normal") {
        return Bad(inst, "distribution= must be rng_uniform or rng_normal");
      }
      return Declared(c);
    }
    case Opcode::kRngBitGenerator: {
      TPUEMU_RETURN_IF_ERROR(OperandCount(c, 1));
      auto out = Declared(c);
      if (!out.ok()) return out;
      if (!out->IsTuple() || out->tuple.size() != 2 || !Compatible(out->tuple[0], *c.operands[0])) {
        return Bad(inst, "rng-bit-generator returns (state, bits) with the operand's state shape");
      }
      const Shape& state = *c.operands[0];
      if (state.type != PrimitiveType::kU64 || state.rank() != 1 || state.dims[0] < 2) {
        return Bad(inst, "the state must be u64[2] or longer, found " + state.ToString());
      }
      return out;
    }
    case Opcode::kRngGetAndUpdateState:
      TPUEMU_RETURN_IF_ERROR(OperandCount(c, 0));
      return Shape::Array(PrimitiveType::kU64, {2});
    case Opcode::kBatchNormTraining:
    case Opcode::kBatchNormInference:
    case Opcode::kBatchNormGrad: {
      const int n = op == Opcode::kBatchNormTraining ? 3 : 5;
      TPUEMU_RETURN_IF_ERROR(OperandCount(c, n));
      const Shape& x = *c.operands[0];
      const int64_t f = inst.a().feature_index;
      if (!IsFloating(x.type) || f < 0 || f >= x.rank()) {
        return Bad(inst, "feature_index must name a dimension of a floating-point operand");
      }
      const Shape vec = Shape::Array(x.type, {x.dims[static_cast<size_t>(f)]});
      for (int i = 1; i < n; ++i) {
        const Shape& s = *c.operands[static_cast<size_t>(i)];
        const bool full = op == Opcode::kBatchNormGrad && i == 4;
        if (!Compatible(s, full ? x : vec)) {
          return Bad(inst, "operand " + std::to_string(i) + " must be " +
                               (full ? x : vec).ToString() + ", found " + s.ToString());
        }
      }
      if (op == Opcode::kBatchNormInference) return x;
      return Shape::Tuple({x, vec, vec});
    }
    default:
      return Bad(inst, "no shape rule for this opcode");
  }
}

Result<Shape> InferDataMovement(const InferContext& c) {
  const Instruction& inst = c.inst;
  const Opcode op = inst.opcode;
  if (op == Opcode::kCopyDone) {
    TPUEMU_RETURN_IF_ERROR(OperandCount(c, 1));
    const Shape& s = *c.operands[0];
    if (!s.IsTuple() || s.tuple.empty()) return Bad(inst, "operand is not a copy-start");
    return s.tuple[0];
  }
  if (op == Opcode::kCopy || op == Opcode::kCopyStart) {
    TPUEMU_RETURN_IF_ERROR(OperandCount(c, 1));
    if (op == Opcode::kCopy) return *c.operands[0];
    return Shape::Tuple({*c.operands[0], *c.operands[0], Shape::Array(PrimitiveType::kU32, {})});
  }
  TPUEMU_RETURN_IF_ERROR(ArrayOperands(c));
  TPUEMU_RETURN_IF_ERROR(OperandCount(c, -1, 1));
  const Shape& x = *c.operands[0];
  const int64_t rank = x.rank();
  switch (op) {
    case Opcode::kBroadcast: {
      TPUEMU_RETURN_IF_ERROR(OperandCount(c, 1));
      auto out = Declared(c);
      if (!out.ok()) return out;
      const std::vector<int64_t>& d = inst.dimensions;
      if (!out->IsArray() || !SameKind(out->type, x.type) ||
          static_cast<int64_t>(d.size()) != rank || !ValidDims(d, out->rank())) {
        return Bad(inst, "dimensions=" + Dims(d) + " do not map " + x.ToString() + " into " +
                             out->ToString());
      }
      for (size_t i = 0; i < d.size(); ++i) {
        if (out->dims[static_cast<size_t>(d[i])] != x.dims[i]) {
          return Bad(inst, "operand dim " + std::to_string(i) + " (" + std::to_string(x.dims[i]) +
                               ") does not match output dim " + std::to_string(d[i]));
        }
      }
      return Shape::Array(x.type, out->dims);
    }
    case Opcode::kReshape:
    case Opcode::kBitcast: {
      auto out = Declared(c);
      if (!out.ok()) return out;
      if (!out->IsArray() || out->ElementCount() != x.ElementCount() || out->type != x.type) {
        return Bad(inst, "cannot " + std::string(OpcodeName(op)) + " " + x.ToString() + " to " +
                             out->ToString());
      }
      return out;
    }
    case Opcode::kTranspose: {
      const std::vector<int64_t>& p = inst.dimensions;
      if (static_cast<int64_t>(p.size()) != rank || !ValidDims(p, rank)) {
        return Bad(inst, "dimensions=" + Dims(p) + " is not a permutation of " + x.ToString());
      }
      std::vector<int64_t> dims;
      for (int64_t d : p) dims.push_back(x.dims[static_cast<size_t>(d)]);
      return Shape::Array(x.type, dims);
    }
    case Opcode::kReverse:
      if (!ValidDims(inst.dimensions, rank)) {
        return Bad(inst,
                   "dimensions=" + Dims(inst.dimensions) + " are not dims of " + x.ToString());
      }
      return Shape::Array(x.type, x.dims);
    case Opcode::kSlice: {
      const Attributes& a = inst.a();
      if (static_cast<int64_t>(a.slice_start.size()) != rank) {
        return Bad(inst, "slice= needs one range per dimension of " + x.ToString());
      }
      std::vector<int64_t> dims;
      for (size_t i = 0; i < a.slice_start.size(); ++i) {
        const int64_t s = a.slice_start[i], l = a.slice_limit[i], st = a.slice_stride[i];
        if (s < 0 || l < s || l > x.dims[i] || st < 1) {
          return Bad(inst, "slice range [" + std::to_string(s) + ":" + std::to_string(l) + ":" +
                               std::to_string(st) + "] is outside dimension " + std::to_string(i) +
                               " of " + x.ToString());
        }
        dims.push_back((l - s + st - 1) / st);
      }
      return Shape::Array(x.type, dims);
    }
    case Opcode::kDynamicSlice:
    case Opcode::kDynamicUpdateSlice: {
      const bool update = op == Opcode::kDynamicUpdateSlice;
      const size_t first_index = update ? 2 : 1;
      const size_t n_index = c.operands.size() - std::min(c.operands.size(), first_index);
      const bool vector_form = n_index == 1 && c.operands[first_index]->rank() == 1;
      if (!vector_form && static_cast<int64_t>(n_index) != rank) {
        return Bad(inst,
                   "needs " + std::to_string(rank) + " start index operands for " + x.ToString());
      }
      for (size_t i = first_index; i < c.operands.size(); ++i) {
        const Shape& s = *c.operands[i];
        if (!IsInteger(s.type) || (!vector_form && !IsScalar(s)) ||
            (vector_form && s.dims[0] != rank)) {
          return Bad(inst, "start indices must be integer scalars, found " + s.ToString());
        }
      }
      std::vector<int64_t> sizes = update ? c.operands[1]->dims : inst.a().dynamic_slice_sizes;
      if (update && !SameKind(c.operands[1]->type, x.type)) {
        return Bad(inst, "the update's element type differs from the operand's");
      }
      if (static_cast<int64_t>(sizes.size()) != rank) {
        return Bad(inst, std::string(update ? "the update" : "dynamic_slice_sizes=") +
                             " must have the operand's rank " + std::to_string(rank));
      }
      for (size_t i = 0; i < sizes.size(); ++i) {
        if (sizes[i] < 0 || sizes[i] > x.dims[i]) {
          return Bad(inst, "slice size " + std::to_string(sizes[i]) + " exceeds dimension " +
                               std::to_string(i) + " of " + x.ToString());
        }
      }
      return update ? Shape::Array(x.type, x.dims) : Shape::Array(x.type, sizes);
    }
    case Opcode::kConcatenate: {
      if (inst.dimensions.size() != 1 || inst.dimensions[0] < 0 || inst.dimensions[0] >= rank) {
        return Bad(inst, "dimensions= must name one dimension of " + x.ToString());
      }
      const auto d = static_cast<size_t>(inst.dimensions[0]);
      std::vector<int64_t> dims = x.dims;
      for (size_t i = 1; i < c.operands.size(); ++i) {
        const Shape& s = *c.operands[i];
        bool ok = s.rank() == rank && SameKind(s.type, x.type);
        for (size_t k = 0; ok && k < dims.size(); ++k) ok = k == d || s.dims[k] == x.dims[k];
        if (!ok) return Bad(inst, "cannot concatenate " + x.ToString() + " and " + s.ToString());
        dims[d] += s.dims[d];
      }
      return Shape::Array(x.type, dims);
    }
    case Opcode::kPad: {
      TPUEMU_RETURN_IF_ERROR(OperandCount(c, 2));
      const std::vector<PadDim>& p = inst.a().padding;
      if (!IsScalar(*c.operands[1]) || !SameKind(c.operands[1]->type, x.type)) {
        return Bad(inst, "the padding value must be a scalar of the operand's type");
      }
      if (static_cast<int64_t>(p.size()) != rank) {
        return Bad(inst, "padding= needs one entry per dimension of " + x.ToString());
      }
      std::vector<int64_t> dims;
      for (size_t i = 0; i < p.size(); ++i) {
        const int64_t d = x.dims[i];
        const int64_t out = p[i].low + p[i].high + d + std::max<int64_t>(d - 1, 0) * p[i].interior;
        if (p[i].interior < 0 || out < 0) {
          return Bad(inst, "padding of dimension " + std::to_string(i) + " is invalid");
        }
        dims.push_back(out);
      }
      return Shape::Array(x.type, dims);
    }
    default:
      return Bad(inst, "no shape rule for this opcode");
  }
}

}  // namespace tpuemu::engine::hlo::internal
