// chlo ops as XLA's chlo legalization expands them before compiling (xla's
// chlo_legalize_to_hlo): those HLO has an opcode for map to it; numpy-broadcasting binary ops
// become broadcasts and the elementwise op; the special functions are lower_chlo_math.cpp's; the
// rest are refused by name (op_table.h).
#include <cmath>
#include <limits>

#include "engine/stablehlo/lower_internal.h"
#include "engine/stablehlo/op_table.h"

namespace tpuemu::engine::stablehlo::internal {

Result<std::vector<int>> Lowerer::LowerChlo(const Op& op, const std::vector<int>& operands) {
  const std::string name = op.name.substr(5);
  if (op.result_types.size() != 1 && name != "top_k") return Error(op, "needs one result");
  const hlo::Shape result = op.result_types.empty() ? hlo::Shape() : op.result_types[0];
  auto one = [&](hlo::Instruction inst) -> Result<std::vector<int>> {
    Result<int> p = Emit(std::move(inst), op);
    if (!p.ok()) return p.status();
    return std::vector<int>{*p};
  };
  static const std::pair<const char*, hlo::Opcode> kUnary[] = {
      {"acos", hlo::Opcode::kAcos}, {"acosh", hlo::Opcode::kAcosh},
      {"asin", hlo::Opcode::kAsin}, {"asinh", hlo::Opcode::kAsinh},
      {"atan", hlo::Opcode::kAtan}, {"atanh", hlo::Opcode::kAtanh},
      {"cosh", hlo::Opcode::kCosh}, {"sinh", hlo::Opcode::kSinh},
      {"erf", hlo::Opcode::kErf},   {"tan", hlo::Opcode::kTan},
  };
  for (const auto& [n, opcode] : kUnary) {
    if (name == n) return one(Make(opcode, operands, result));
  }
  if (name.rfind("broadcast_", 0) == 0) {
    const std::string base = name.substr(10);
    std::optional<hlo::Opcode> opcode = SimpleOpcode(base);
    if (base == "compare") opcode = hlo::Opcode::kCompare;
    if (!opcode || operands.size() != 2) return Unsupported(op);
    if (op.Find("broadcast_dimensions") != nullptr) {
      return Unsupported(op, "explicit broadcast_dimensions");
    }
    std::vector<int> ops;
    for (int o : operands) {
      Result<int> b = Broadcast(o, hlo::Shape::Array(ShapeOf(o).type, result.dims), op);
      if (!b.ok()) return b.status();
      ops.push_back(*b);
    }
    hlo::Instruction inst = Make(*opcode, ops, result);
    if (base == "compare") {
      const std::string d = WordOf(op, "comparison_direction");
      static const std::pair<const char*, hlo::Direction> kDir[] = {
          {"EQ", hlo::Direction::kEq}, {"NE", hlo::Direction::kNe}, {"LT", hlo::Direction::kLt},
          {"LE", hlo::Direction::kLe}, {"GT", hlo::Direction::kGt}, {"GE", hlo::Direction::kGe}};
      inst.mutable_attrs().has_direction = true;
      for (const auto& [w, dir] : kDir) {
        if (d == w) inst.mutable_attrs().direction = dir;
      }
    }
    return one(std::move(inst));
  }
  if (name == "square")
    return one(Make(hlo::Opcode::kMultiply, {operands[0], operands[0]}, result));
  if (name == "is_inf" || name == "is_pos_inf" || name == "is_neg_inf") {
    const hlo::Shape& x = ShapeOf(operands[0]);
    int value = operands[0];
    if (name == "is_inf") {
      Result<int> abs = Emit(Make(hlo::Opcode::kAbs, {operands[0]}, x), op);
      if (!abs.ok()) return abs.status();
      value = *abs;
    }
    const double inf = std::numeric_limits<double>::infinity();
    Result<int> c = Constant(name == "is_neg_inf" ? -inf : inf, x.type, op);
    if (!c.ok()) return c.status();
    Result<int> b = Broadcast(*c, x, op);
    if (!b.ok()) return b.status();
    hlo::Instruction cmp = Make(hlo::Opcode::kCompare, {value, *b}, result);
    cmp.mutable_attrs().has_direction = true;
    cmp.mutable_attrs().direction = hlo::Direction::kEq;
    return one(std::move(cmp));
  }
  if (name == "constant_like") {
    const Attr* v = op.Find("value");
    if (v == nullptr) return Error(op, "needs a value");
    Result<int> c =
        Constant(v->kind == Attr::Kind::kFloat ? v->f : static_cast<double>(v->i), result.type, op);
    if (!c.ok()) return c.status();
    Result<int> b = Broadcast(*c, result, op);
    if (!b.ok()) return b.status();
    return std::vector<int>{*b};
  }
  if (name == "constant") {
    const Attr* v = op.Find("value");
    if (v == nullptr || v->kind != Attr::Kind::kDense) return Error(op, "needs a dense value");
    Result<std::shared_ptr<const hlo::Value>> value = DenseValue(*v->dense, result);
    if (!value.ok()) return Error(op, value.status().message());
    hlo::Instruction inst = Make(hlo::Opcode::kConstant, {}, result);
    inst.literal = std::move(*value);
    return one(std::move(inst));
  }
  if (name == "top_k") {
    hlo::Instruction inst = Make(hlo::Opcode::kTopK, operands, hlo::Shape::Tuple(op.result_types));
    inst.mutable_attrs().k = IntOf(op, "k", 1);
    inst.mutable_attrs().largest = true;
    Result<int> p = Emit(std::move(inst), op);
    if (!p.ok()) return p.status();
    return Unpack(*p, op.result_types.size(), true, op);
  }
  if (name == "erfc" || name == "erf_inv" || name == "lgamma" || name == "digamma" ||
      name == "next_after" || name == "conj" || name == "bessel_i1e" || name == "zeta" ||
      name == "polygamma") {
    return LowerChloMath(op, name, operands);
  }
  return Unsupported(op, RefusalReason(op.name));
}

}  // namespace tpuemu::engine::stablehlo::internal
