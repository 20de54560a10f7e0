// Shape rules of the ops that apply a computation (reduce, reduce-window, select-and-scatter,
// sort, map), topk, and the collectives.
#include <algorithm>

#include "engine/hlo/verifier_internal.h"

namespace tpuemu::engine::hlo::internal {
namespace {

std::vector<int64_t> WindowOutput(const Shape& x, const std::vector<WindowDim>& window) {
  std::vector<int64_t> dims;
  for (size_t i = 0; i < window.size(); ++i) dims.push_back(window[i].OutputSize(x.dims[i]));
  return dims;
}

Status CheckWindow(const InferContext& c, const Shape& x) {
  const Attributes& a = c.inst.a();
  if (static_cast<int64_t>(a.window.size()) != x.rank()) {
    return Bad(c.inst, "window= needs one dimension per dimension of " + x.ToString());
  }
  for (const WindowDim& w : a.window) {
    if (w.size < 1 || w.stride < 1 || w.base_dilation < 1 || w.window_dilation < 1) {
      return Bad(c.inst, "window sizes, strides and dilations must be positive");
    }
  }
  return Status::Ok();
}

// N arrays then N scalar inits; the reducer maps 2N scalars to N (a tuple when N > 1).
Result<std::vector<PrimitiveType>> CheckReducer(const InferContext& c, size_t n) {
  auto comp = Called(c, 0, "to_apply");
  if (!comp.ok()) return comp.status();
  std::vector<Shape> params;
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t i = 0; i < n; ++i) {
      params.push_back(Shape::Array(c.operands[n + i]->type, {}));
    }
  }
  auto root = CheckSignature(c, **comp, params, "to_apply");
  if (!root.ok()) return root.status();
  std::vector<PrimitiveType> types;
  if (n == 1 && IsScalar(*root)) return std::vector<PrimitiveType>{root->type};
  if (!root->IsTuple() || root->tuple.size() != n) {
    return Bad(c.inst, "to_apply must return " + std::to_string(n) + " scalar(s), returns " +
                           root->ToString());
  }
  for (const Shape& s : root->tuple) {
    if (!IsScalar(s)) return Bad(c.inst, "to_apply must return scalars");
    types.push_back(s.type);
  }
  return types;
}

Shape Results(const std::vector<PrimitiveType>& types, const std::vector<int64_t>& dims) {
  if (types.size() == 1) return Shape::Array(types[0], dims);
  std::vector<Shape> out;
  for (PrimitiveType t : types) out.push_back(Shape::Array(t, dims));
  return Shape::Tuple(std::move(out));
}

Result<Shape> InferReduceLike(const InferContext& c) {
  const Instruction& inst = c.inst;
  TPUEMU_RETURN_IF_ERROR(ArrayOperands(c));
  if (c.operands.size() < 2 || c.operands.size() % 2 != 0) {
    return Bad(inst, "expected N arrays and N init values");
  }
  const size_t n = c.operands.size() / 2;
  const Shape& x = *c.operands[0];
  for (size_t i = 0; i < n; ++i) {
    if (c.operands[i]->dims != x.dims) return Bad(inst, "the reduced arrays differ in shape");
    if (!IsScalar(*c.operands[n + i])) return Bad(inst, "init values must be scalars");
  }
  auto types = CheckReducer(c, n);
  if (!types.ok()) return types.status();
  if (inst.opcode == Opcode::kReduce) {
    if (!ValidDims(inst.dimensions, x.rank())) {
      return Bad(inst, "dimensions=" + Dims(inst.dimensions) + " are not dims of " + x.ToString());
    }
    std::vector<int64_t> dims;
    for (int64_t i = 0; i < x.rank(); ++i) {
      if (std::find(inst.dimensions.begin(), inst.dimensions.end(), i) == inst.dimensions.end()) {
        dims.push_back(x.dims[static_cast<size_t>(i)]);
      }
    }
    return Results(*types, dims);
  }
  TPUEMU_RETURN_IF_ERROR(CheckWindow(c, x));
  return Results(*types, WindowOutput(x, inst.a().window));
}

Result<Shape> InferSelectAndScatter(const InferContext& c) {
  const Instruction& inst = c.inst;
  TPUEMU_RETURN_IF_ERROR(OperandCount(c, 3));
  TPUEMU_RETURN_IF_ERROR(ArrayOperands(c));
  const Shape& x = *c.operands[0];
  const Shape& source = *c.operands[1];
  TPUEMU_RETURN_IF_ERROR(CheckWindow(c, x));
  if (source.dims != WindowOutput(x, inst.a().window)) {
    return Bad(inst,
               "source " + source.ToString() + " does not match the windows of " + x.ToString());
  }
  if (!IsScalar(*c.operands[2])) return Bad(inst, "the init value must be a scalar");
  const Shape scalar = Shape::Array(x.type, {});
  auto select = Called(c, 0, "select");
  if (!select.ok()) return select.status();
  auto sroot = CheckSignature(c, **select, {scalar, scalar}, "select");
  if (!sroot.ok()) return sroot.status();
  if (!Compatible(*sroot, Shape::Array(PrimitiveType::kPred, {}))) {
    return Bad(inst, "select must return pred[]");
  }
  auto scatter = Called(c, 1, "scatter");
  if (!scatter.ok()) return scatter.status();
  const Shape src_scalar = Shape::Array(source.type, {});
  auto root = CheckSignature(c, **scatter, {src_scalar, src_scalar}, "scatter");
  if (!root.ok()) return root.status();
  return x;
}

Result<Shape> InferSortLike(const InferContext& c) {
  const Instruction& inst = c.inst;
  TPUEMU_RETURN_IF_ERROR(OperandCount(c, -1, 1));
  TPUEMU_RETURN_IF_ERROR(ArrayOperands(c));
  const Shape& x = *c.operands[0];
  if (inst.opcode == Opcode::kTopK) {
    const int64_t k = inst.a().k;
    if (x.rank() < 1 || k < 0 || k > x.dims.back()) return Bad(inst, "k= is out of range");
    std::vector<int64_t> dims = x.dims;
    dims.back() = k;
    return Shape::Tuple({Shape::Array(x.type, dims), Shape::Array(PrimitiveType::kS32, dims)});
  }
  if (inst.opcode == Opcode::kMap) {
    for (const Shape* s : c.operands) {
      if (s->dims != x.dims) return Bad(inst, "map operands differ in shape");
    }
    auto comp = Called(c, 0, "to_apply");
    if (!comp.ok()) return comp.status();
    std::vector<Shape> params;
    for (const Shape* s : c.operands) params.push_back(Shape::Array(s->type, {}));
    auto root = CheckSignature(c, **comp, params, "to_apply");
    if (!root.ok()) return root.status();
    if (!IsScalar(*root)) return Bad(inst, "map's to_apply must return a scalar");
    return Shape::Array(root->type, x.dims);
  }
  if (inst.dimensions.size() != 1 || !ValidDims(inst.dimensions, x.rank())) {
    return Bad(inst, "dimensions= must name one dimension of " + x.ToString());
  }
  std::vector<Shape> params;
  for (int pass = 0; pass < 1; ++pass) {
    for (const Shape* s : c.operands) {
      if (s->dims != x.dims) return Bad(inst, "sort operands differ in shape");
      params.push_back(Shape::Array(s->type, {}));
      params.push_back(Shape::Array(s->type, {}));
    }
  }
  auto comp = Called(c, 0, "to_apply");
  if (!comp.ok()) return comp.status();
  auto root = CheckSignature(c, **comp, params, "comparator");
  if (!root.ok()) return root.status();
  if (!Compatible(*root, Shape::Array(PrimitiveType::kPred, {}))) {
    return Bad(inst, "the comparator must return pred[]");
  }
  if (c.operands.size() == 1) return x;
  std::vector<Shape> outs;
  for (const Shape* s : c.operands) outs.push_back(*s);
  return Shape::Tuple(std::move(outs));
}

// The array every participant contributes (all operands flattened into one list).
std::vector<const Shape*> Leaves(const InferContext& c) {
  std::vector<const Shape*> leaves;
  for (const Shape* s : c.operands) CollectLeaves(*s, leaves);
  return leaves;
}

}  // namespace

Result<Shape> InferReduction(const InferContext& c) {
  switch (c.inst.opcode) {
    case Opcode::kReduce:
    case Opcode::kReduceWindow:
      return InferReduceLike(c);
    case Opcode::kSelectAndScatter:
      return InferSelectAndScatter(c);
    default:
      return InferSortLike(c);
  }
}

Result<Shape> InferCollective(const InferContext& c) {
  const Instruction& inst = c.inst;
  const Opcode op = inst.opcode;
  const Attributes& a = inst.a();
  for (const auto& group : a.replica_groups) {
    for (int64_t id : group) {
      if (id < 0) return Bad(inst, "replica ids must not be negative");
    }
  }
  if (op == Opcode::kAllReduceDone || op == Opcode::kAllGatherDone ||
      op == Opcode::kCollectivePermuteDone) {
    TPUEMU_RETURN_IF_ERROR(OperandCount(c, 1));
    const Shape& s = *c.operands[0];
    if (op == Opcode::kAllReduceDone) return s;
    // all-gather-start / collective-permute-start return (operand(s), result(s)[, context...]),
    // or (older dumps) the result itself.
    if (!s.IsTuple() || s.tuple.size() < 2) return s;
    return s.tuple[1];
  }
  TPUEMU_RETURN_IF_ERROR(OperandCount(c, -1, 1));
  const std::vector<const Shape*> leaves = Leaves(c);
  for (const Shape* s : leaves) {
    if (!s->IsArray()) return Bad(inst, "collective operands must be arrays");
  }
  auto same_as_operands = [&]() -> Shape {
    if (c.operands.size() == 1) return *c.operands[0];
    std::vector<Shape> outs;
    for (const Shape* s : c.operands) outs.push_back(*s);
    return Shape::Tuple(std::move(outs));
  };
  switch (op) {
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart: {
      auto comp = Called(c, 0, "to_apply");
      if (!comp.ok()) return comp.status();
      const Shape scalar = Shape::Array(leaves[0]->type, {});
      auto root = CheckSignature(c, **comp, {scalar, scalar}, "to_apply");
      if (!root.ok()) return root.status();
      return same_as_operands();
    }
    case Opcode::kCollectivePermute:
    case Opcode::kCollectiveBroadcast:
      for (const auto& [src, dst] : a.source_target_pairs) {
        if (src < 0 || dst < 0) return Bad(inst, "source_target_pairs ids must not be negative");
      }
      return same_as_operands();
    case Opcode::kCollectivePermuteStart:
    case Opcode::kAllGatherStart:
    case Opcode::kAllGather:
    case Opcode::kReduceScatter:
    case Opcode::kAllToAll: {
      auto out = Declared(c);
      if (!out.ok()) return out;
      if (op == Opcode::kCollectivePermuteStart || op == Opcode::kAllGatherStart) return out;
      std::vector<const Shape*> outs;
      CollectLeaves(*out, outs);
      if (outs.size() != leaves.size()) {
        return Bad(inst, "the result has " + std::to_string(outs.size()) + " arrays for " +
                             std::to_string(leaves.size()) + " operand arrays");
      }
      const bool split = op != Opcode::kAllToAll || inst.has_dimensions;
      if (split &&
          (inst.dimensions.size() != 1 || !ValidDims(inst.dimensions, leaves[0]->rank()))) {
        return Bad(inst, "dimensions= must name one dimension of the operand");
      }
      for (size_t i = 0; i < leaves.size(); ++i) {
        const Shape& in = *leaves[i];
        const Shape& o = *outs[i];
        bool ok = in.rank() == o.rank() && in.type == o.type;
        for (int64_t d = 0; ok && d < in.rank(); ++d) {
          const int64_t a_dim = in.dims[static_cast<size_t>(d)],
                        o_dim = o.dims[static_cast<size_t>(d)];
          const bool is_split = split && d == inst.dimensions[0];
          if (op == Opcode::kAllGather)
            ok = is_split ? (a_dim > 0 ? o_dim % a_dim == 0 : o_dim == 0) : a_dim == o_dim;
          if (op == Opcode::kReduceScatter)
            ok = is_split ? (o_dim > 0 ? a_dim % o_dim == 0 : a_dim == 0) : a_dim == o_dim;
          if (op == Opcode::kAllToAll) ok = a_dim == o_dim;
        }
        if (!ok) {
          return Bad(inst, "cannot " + std::string(OpcodeName(op)) + " " + in.ToString() +
                               " into " + o.ToString());
        }
      }
      if (op == Opcode::kReduceScatter) {
        auto comp = Called(c, 0, "to_apply");
        if (!comp.ok()) return comp.status();
        const Shape scalar = Shape::Array(leaves[0]->type, {});
        auto root = CheckSignature(c, **comp, {scalar, scalar}, "to_apply");
        if (!root.ok()) return root.status();
      }
      return out;
    }
    default:
      return Bad(inst, "no shape rule for this collective");
  }
}

}  // namespace tpuemu::engine::hlo::internal
