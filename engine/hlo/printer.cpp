#include "engine/hlo/printer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace tpuemu::engine::hlo {
namespace {

std::string Join(const std::vector<int64_t>& v, const char* sep = ",") {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + std::to_string(v[i]);
  return s;
}

// "f32[2,3]{1,0}", "f32[]", "(f32[2]{0}, s32[])": a shape as XLA prints it, with layouts.
std::string ShapeText(const Shape& shape) {
  if (shape.IsTuple()) {
    std::string s = "(";
    for (size_t i = 0; i < shape.tuple.size(); ++i)
      s += (i ? ", " : "") + ShapeText(shape.tuple[i]);
    return s + ")";
  }
  std::string s = std::string(PrimitiveTypeName(shape.type)) + "[" + Join(shape.dims) + "]";
  if (shape.dims.empty()) return s;
  return s + "{" + Join(shape.Layout()) + "}";
}

std::string Quoted(const std::string& s) {
  std::string q = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') q += '\\';
    q += c;
  }
  return q + "\"";
}

// A scalar literal that reads back to the same value: floats with 9 significant digits (every
// f32 and bf16 value round-trips), inf/-inf/nan by name.
Result<std::string> ScalarLiteral(const Instruction& inst) {
  if (!inst.literal || inst.literal->is_tuple || !inst.literal->array ||
      inst.literal->array->size() != 1 || inst.shape.rank() != 0) {
    return Status::InvalidArgument(inst.Describe() + ": only scalar constants are printed");
  }
  const Array& a = *inst.literal->array;
  const double v = a.GetDouble(0);
  if (a.type == PrimitiveType::kPred) return std::string(v != 0 ? "true" : "false");
  if (!a.floating()) return std::to_string(static_cast<int64_t>(v));
  if (std::isnan(v)) return std::string("nan");
  if (std::isinf(v)) return std::string(v > 0 ? "inf" : "-inf");
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return std::string(buf);
}

std::string_view DirectionName(Direction d) {
  switch (d) {
    case Direction::kEq:
      return "EQ";
    case Direction::kNe:
      return "NE";
    case Direction::kLt:
      return "LT";
    case Direction::kLe:
      return "LE";
    case Direction::kGt:
      return "GT";
    case Direction::kGe:
      return "GE";
  }
  return "EQ";
}

// "size=3x3 stride=2x2 pad=1_1x0_1 lhs_dilate=2x2 rhs_dilate=2x2", leaving out what is default.
std::string WindowText(const std::vector<WindowDim>& window) {
  std::vector<int64_t> size, stride, lhs, rhs;
  std::string pad;
  bool strided = false, padded = false, lhs_dilated = false, rhs_dilated = false;
  for (size_t i = 0; i < window.size(); ++i) {
    const WindowDim& w = window[i];
    size.push_back(w.size);
    stride.push_back(w.stride);
    lhs.push_back(w.base_dilation);
    rhs.push_back(w.window_dilation);
    strided |= w.stride != 1;
    padded |= w.pad_low != 0 || w.pad_high != 0;
    lhs_dilated |= w.base_dilation != 1;
    rhs_dilated |= w.window_dilation != 1;
    pad += (i ? "x" : "") + std::to_string(w.pad_low) + "_" + std::to_string(w.pad_high);
  }
  std::string s = "size=" + Join(size, "x");
  if (strided) s += " stride=" + Join(stride, "x");
  if (padded) s += " pad=" + pad;
  if (lhs_dilated) s += " lhs_dilate=" + Join(lhs, "x");
  if (rhs_dilated) s += " rhs_dilate=" + Join(rhs, "x");
  return s;
}

// One side of dim_labels: `a` and `b` at their positions, spatial dimension k as the digit k.
std::string Labels(size_t rank, char a, int64_t da, char b, int64_t db,
                   const std::vector<int64_t>& spatial) {
  std::string s(rank, '?');
  s[static_cast<size_t>(da)] = a;
  s[static_cast<size_t>(db)] = b;
  for (size_t k = 0; k < spatial.size(); ++k) {
    s[static_cast<size_t>(spatial[k])] = static_cast<char>('0' + k);
  }
  return s;
}

// The attributes after the operand list, ", dimensions={1}" ..., or an error for an instruction
// this printer does not cover.
Result<std::string> AttributeText(const Module& module, const Instruction& inst) {
  const Opcode op = inst.opcode;
  auto dimensions = [&] { return ", dimensions={" + Join(inst.dimensions) + "}"; };
  // Builders name no operand precision, and call computations only as a reduce's to_apply.
  const bool calls = !inst.called.empty();
  if (inst.precision != DotPrecision::kUnset || calls != (op == Opcode::kReduce)) {
    return Status::InvalidArgument(inst.Describe() +
                                   ": not printed (an operand precision, or called computations "
                                   "other than a reduce's to_apply)");
  }
  switch (op) {
    case Opcode::kParameter:
    case Opcode::kConstant:
    case Opcode::kReshape:
    case Opcode::kConvert:
    case Opcode::kCopy:
    case Opcode::kSelect:
    case Opcode::kTuple:
      return std::string();
    case Opcode::kIota:
      return ", iota_dimension=" + std::to_string(inst.index);
    case Opcode::kBroadcast:
    case Opcode::kTranspose:
    case Opcode::kReverse:
    case Opcode::kConcatenate:
      return dimensions();
    case Opcode::kReduce:
      return dimensions() +
             ", to_apply=" + module.computations[static_cast<size_t>(inst.called[0])].name;
    case Opcode::kCompare:
      if (inst.a().compare_type != CompareType::kDefault) break;
      return ", direction=" + std::string(DirectionName(inst.a().direction));
    case Opcode::kSlice: {
      const Attributes& a = inst.a();
      std::string s;
      for (size_t d = 0; d < a.slice_start.size(); ++d) {
        const int64_t stride = d < a.slice_stride.size() ? a.slice_stride[d] : 1;
        s += (d ? ", [" : "[") + std::to_string(a.slice_start[d]) + ":" +
             std::to_string(a.slice_limit[d]) + (stride != 1 ? ":" + std::to_string(stride) : "") +
             "]";
      }
      return ", slice={" + s + "}";
    }
    case Opcode::kDot: {
      const DotDims& d = inst.a().dot;
      if (!inst.a().sparsity.empty()) break;
      std::string s;
      if (!d.lhs_batch.empty()) s += ", lhs_batch_dims={" + Join(d.lhs_batch) + "}";
      s += ", lhs_contracting_dims={" + Join(d.lhs_contracting) + "}";
      if (!d.rhs_batch.empty()) s += ", rhs_batch_dims={" + Join(d.rhs_batch) + "}";
      return s + ", rhs_contracting_dims={" + Join(d.rhs_contracting) + "}";
    }
    case Opcode::kConvolution: {
      const Attributes& a = inst.a();
      const ConvDims& c = a.conv;
      const size_t rank = c.input_spatial.size() + 2;
      std::string s = a.has_window ? ", window={" + WindowText(a.window) + "}" : "";
      s += ", dim_labels=" +
           Labels(rank, 'b', c.input_batch, 'f', c.input_feature, c.input_spatial) + "_" +
           Labels(rank, 'i', c.kernel_input_feature, 'o', c.kernel_output_feature,
                  c.kernel_spatial) +
           "->" + Labels(rank, 'b', c.output_batch, 'f', c.output_feature, c.output_spatial);
      if (a.feature_group_count != 1) {
        s += ", feature_group_count=" + std::to_string(a.feature_group_count);
      }
      if (a.batch_group_count != 1) {
        s += ", batch_group_count=" + std::to_string(a.batch_group_count);
      }
      return s;
    }
    default:
      if (IsElementwiseUnary(op) || IsElementwiseBinary(op)) return std::string();
      break;
  }
  return Status::InvalidArgument(inst.Describe() + ": not printed (" + std::string(OpcodeName(op)) +
                                 " is outside what builders write)");
}

Status PrintComputation(const Module& module, const Computation& comp, std::ostringstream& out) {
  out << (comp.is_entry ? "ENTRY " : "") << comp.name << " {\n";
  for (size_t i = 0; i < comp.instructions.size(); ++i) {
    const Instruction& inst = comp.instructions[i];
    Result<std::string> attrs = AttributeText(module, inst);
    if (!attrs.ok()) return attrs.status();
    std::string inside;
    if (inst.opcode == Opcode::kParameter) {
      inside = std::to_string(inst.index);
    } else if (inst.opcode == Opcode::kConstant) {
      Result<std::string> literal = ScalarLiteral(inst);
      if (!literal.ok()) return literal.status();
      inside = *literal;
    } else {
      for (size_t k = 0; k < inst.operands.size(); ++k) {
        inside += (k ? ", " : "") + comp.instructions[static_cast<size_t>(inst.operands[k])].name;
      }
    }
    out << (static_cast<int>(i) == comp.root ? "  ROOT " : "  ") << inst.name << " = "
        << ShapeText(inst.shape) << " " << OpcodeName(inst.opcode) << "(" << inside << ")"
        << *attrs;
    if (!inst.op_name.empty()) out << ", metadata={op_name=" << Quoted(inst.op_name) << "}";
    out << "\n";
  }
  out << "}\n";
  return Status::Ok();
}

}  // namespace

Result<std::string> PrintModule(const Module& module) {
  if (module.entry < 0) return Status::InvalidArgument("module " + module.name + " has no entry");
  const Computation& entry = module.entry_computation();
  std::string params;
  for (int p : entry.parameters) {
    params +=
        (params.empty() ? "" : ", ") + ShapeText(entry.instructions[static_cast<size_t>(p)].shape);
  }
  std::ostringstream out;
  out << "HloModule " << module.name << ", entry_computation_layout={(" << params << ")->"
      << ShapeText(entry.instructions[static_cast<size_t>(entry.root)].shape) << "}\n\n";
  for (const Computation& comp : module.computations) {
    if (comp.is_entry) continue;
    TPUEMU_RETURN_IF_ERROR(PrintComputation(module, comp, out));
    out << "\n";
  }
  TPUEMU_RETURN_IF_ERROR(PrintComputation(module, entry, out));
  return out.str();
}

}  // namespace tpuemu::engine::hlo
