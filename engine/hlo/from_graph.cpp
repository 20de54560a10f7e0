// LowerGraph (from_graph.h): the emitter of entry instructions, the per-kind dispatch and the
// module text. The composite ops' lowerings are in from_graph_ops.cpp; each writes the HLO JAX
// would trace for the op, keeping the native kernels' order of operations.
#include "engine/hlo/from_graph.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <sstream>

#include "engine/hlo/from_graph_internal.h"

namespace tpuemu::engine::hlo {
namespace from_graph_internal {

std::string HloType(DType dtype) { return std::string(PrimitiveTypeName(LoweredType(dtype))); }

std::string JoinInts(const std::vector<int64_t>& v, const char* sep) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + std::to_string(v[i]);
  return s;
}

namespace {

// "f32[2,3]{1,0}": XLA prints the default (row-major) layout on every array shape.
std::string ShapeText(const std::string& type, const std::vector<int64_t>& dims) {
  std::string s = type + "[" + JoinInts(dims) + "]";
  if (dims.empty()) return s;
  std::vector<int64_t> layout(dims.size());
  std::iota(layout.rbegin(), layout.rend(), 0);
  return s + "{" + JoinInts(layout) + "}";
}

// An HLO identifier ([A-Za-z_][A-Za-z0-9_.-]*) close to `id`.
std::string Identifier(std::string_view id) {
  std::string s;
  for (char c : id) {
    const bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
    s += ok ? c : '_';
  }
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) s = "_" + s;
  return s;
}

std::string Quoted(std::string_view s) {
  std::string q = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') q += '\\';
    q += c;
  }
  return q + "\"";
}

// A float literal that reads back to the same f32 (9 significant digits), or inf/-inf.
std::string FloatLiteral(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(static_cast<float>(v)));
  return buf;
}

}  // namespace

std::string GraphLowerer::Unique(const std::string& name) {
  std::string n = name;
  for (int k = 1; used_names_.count(n); ++k) n = name + "." + std::to_string(k);
  used_names_.insert(n);
  return n;
}

LoweredValue GraphLowerer::Emit(const std::string& step, const std::string& type,
                                std::vector<int64_t> dims, const std::string& opcode,
                                const std::vector<LoweredValue>& operands, std::string attrs,
                                std::string literal) {
  LoweredInstruction inst;
  inst.name = Unique(current_ + "." + step);
  inst.shape = ShapeText(type, dims);
  inst.opcode = opcode;
  for (const LoweredValue& v : operands) inst.operands.push_back(v.index);
  inst.literal = std::move(literal);
  inst.attrs = std::move(attrs);
  inst.op_name = current_op_name_;
  entry_.push_back(std::move(inst));
  return {static_cast<int>(entry_.size()) - 1, type, std::move(dims)};
}

LoweredValue GraphLowerer::Splat(const std::string& type, double v,
                                 const std::vector<int64_t>& dims) {
  const std::string literal = type == "s32" ? std::to_string(std::llround(v)) : FloatLiteral(v);
  const std::string key = type + " " + literal + " " + JoinInts(dims);
  if (auto it = splats_.find(key); it != splats_.end()) return it->second;
  const LoweredValue c = dims.empty() ? Emit("constant", type, {}, "constant", {}, "", literal)
                                      : Emit("broadcast", type, dims, "broadcast",
                                             {Splat(type, v, {})}, ", dimensions={}");
  splats_[key] = c;
  return c;
}

LoweredValue GraphLowerer::BroadcastInDim(const LoweredValue& x, const std::vector<int64_t>& dims,
                                          const std::vector<int64_t>& mapping) {
  // XLA's broadcast maps operand dims onto equal result dims: a size-1 dim that expands is
  // reshaped away first (what jax.lax.broadcast_in_dim lowers to).
  std::vector<int64_t> kept_dims, kept_mapping;
  for (size_t i = 0; i < x.dims.size(); ++i) {
    if (x.dims[i] == dims[static_cast<size_t>(mapping[i])]) {
      kept_dims.push_back(x.dims[i]);
      kept_mapping.push_back(mapping[i]);
    }
  }
  const LoweredValue y = kept_dims.size() == x.dims.size() ? x : Reshape(x, kept_dims);
  return Emit("broadcast", x.type, dims, "broadcast", {y},
              ", dimensions={" + JoinInts(kept_mapping) + "}");
}

LoweredValue GraphLowerer::NumpyBroadcast(const LoweredValue& x, const std::vector<int64_t>& dims) {
  if (x.dims == dims) return x;
  std::vector<int64_t> mapping(x.dims.size());
  std::iota(mapping.begin(), mapping.end(), static_cast<int64_t>(dims.size() - x.dims.size()));
  return BroadcastInDim(x, dims, mapping);
}

LoweredValue GraphLowerer::Convert(const LoweredValue& x, const std::string& type) {
  if (x.type == type) return x;
  return Emit("convert", type, x.dims, "convert", {x});
}

LoweredValue GraphLowerer::Map(const std::string& opcode, const LoweredValue& x) {
  return Emit(opcode, x.type, x.dims, opcode, {x});
}

LoweredValue GraphLowerer::Map(const std::string& opcode, const LoweredValue& a,
                               const LoweredValue& b) {
  return Emit(opcode, a.type, a.dims, opcode, {a, b});
}

LoweredValue GraphLowerer::Reshape(const LoweredValue& x, const std::vector<int64_t>& dims) {
  return Emit("reshape", x.type, dims, "reshape", {x});
}

LoweredValue GraphLowerer::Transpose(const LoweredValue& x, const std::vector<int64_t>& perm) {
  std::vector<int64_t> dims;
  for (int64_t p : perm) dims.push_back(x.dims[static_cast<size_t>(p)]);
  return Emit("transpose", x.type, dims, "transpose", {x}, ", dimensions={" + JoinInts(perm) + "}");
}

std::string GraphLowerer::Reducer(bool max, const std::string& type) {
  const std::string name = std::string(max ? "max." : "add.") + type;
  const std::string opcode = max ? "maximum" : "add";
  reducers_[name] = name + " {\n  lhs = " + type + "[] parameter(0)\n  rhs = " + type +
                    "[] parameter(1)\n  ROOT " + opcode + " = " + type + "[] " + opcode +
                    "(lhs, rhs)\n}\n";
  return name;
}

LoweredValue GraphLowerer::Reduce(const LoweredValue& x, const std::vector<int64_t>& axes,
                                  bool max) {
  std::vector<int64_t> dims;
  for (size_t i = 0; i < x.dims.size(); ++i) {
    if (std::find(axes.begin(), axes.end(), static_cast<int64_t>(i)) == axes.end()) {
      dims.push_back(x.dims[i]);
    }
  }
  const LoweredValue init = Splat(x.type, max ? -std::numeric_limits<double>::infinity() : 0.0, {});
  return Emit(max ? "reduce_max" : "reduce_sum", x.type, dims, "reduce", {x, init},
              ", dimensions={" + JoinInts(axes) + "}, to_apply=" + Reducer(max, x.type));
}

LoweredValue GraphLowerer::Unreduce(const LoweredValue& x, const std::vector<int64_t>& dims,
                                    int64_t axis) {
  std::vector<int64_t> mapping;
  for (int64_t i = 0; i < static_cast<int64_t>(dims.size()); ++i) {
    if (i != axis) mapping.push_back(i);
  }
  return BroadcastInDim(x, dims, mapping);
}

Result<LoweredValue> GraphLowerer::LowerOp(const Op& op, const std::vector<LoweredValue>& in) {
  const std::string type = HloType(op.dtype);
  auto binary = [&](const char* opcode) {
    return Emit(opcode, type, op.shape.dims, opcode,
                {NumpyBroadcast(in[0], op.shape.dims), NumpyBroadcast(in[1], op.shape.dims)});
  };
  switch (op.kind) {
    case OpKind::kParameter:
    case OpKind::kConstant:
      return Emit("parameter", type, op.shape.dims, "parameter", {}, "",
                  std::to_string(next_parameter_++));
    case OpKind::kDot:
      return LowerDot(op, in[0], in[1]);
    case OpKind::kConv2D:
      return LowerConv(op, in[0], in[1]);
    case OpKind::kConv2DBackpropInput:
      return LowerConvBackpropInput(op, in[0], in[1]);
    case OpKind::kConv2DBackpropFilter:
      return LowerConvBackpropFilter(op, in[0], in[1]);
    case OpKind::kAdd:
      return binary("add");
    case OpKind::kSub:
      return binary("subtract");
    case OpKind::kMul:
      return binary("multiply");
    case OpKind::kDiv:
      return binary("divide");
    case OpKind::kMax:
      return binary("maximum");
    case OpKind::kMin:
      return binary("minimum");
    case OpKind::kNeg:
      return Map("negate", in[0]);
    case OpKind::kTanh:
      return Map("tanh", in[0]);
    case OpKind::kExp:
      return Map("exponential", in[0]);
    case OpKind::kLog:
      return Map("log", in[0]);
    case OpKind::kRsqrt:
      return Map("rsqrt", in[0]);
    case OpKind::kRelu:  // jax.nn.relu: max(x, 0)
      return Map("maximum", in[0], Splat(type, 0, in[0].dims));
    case OpKind::kGelu:
      return LowerGelu(in[0]);
    case OpKind::kReluGrad: {  // dy where x > 0 (jax's relu jvp), else 0
      const LoweredValue zeros = Splat(type, 0, in[0].dims);
      const LoweredValue positive =
          Emit("compare", "pred", in[0].dims, "compare", {in[0], zeros}, ", direction=GT");
      return Emit("select", type, in[0].dims, "select", {positive, in[1], zeros});
    }
    case OpKind::kGeluGrad:
      return LowerGeluGrad(in[0], in[1]);
    case OpKind::kSoftmax:
      return LowerSoftmax(op, in[0]);
    case OpKind::kReduce:
      return LowerReduce(op, in[0]);
    case OpKind::kBroadcast:
      return LowerBroadcast(op, in[0]);
    case OpKind::kReshape:
      return Reshape(in[0], op.shape.dims);
    case OpKind::kTranspose:
      return Transpose(in[0], op.attrs.perm);
    case OpKind::kConcat: {
      const int64_t rank = static_cast<int64_t>(op.shape.dims.size());
      const int64_t axis = op.attrs.axis < 0 ? op.attrs.axis + rank : op.attrs.axis;
      return Emit("concatenate", type, op.shape.dims, "concatenate", in,
                  ", dimensions={" + std::to_string(axis) + "}");
    }
    case OpKind::kSlice: {
      std::string s;
      for (size_t d = 0; d < op.attrs.start.size(); ++d) {
        s += (d ? ", [" : "[") + std::to_string(op.attrs.start[d]) + ":" +
             std::to_string(op.attrs.limit[d]) + "]";
      }
      return Emit("slice", type, op.shape.dims, "slice", {in[0]}, ", slice={" + s + "}");
    }
    case OpKind::kConvert:  // always an instruction, even to the same type: the op has a name
      return Emit("convert", type, op.shape.dims, "convert", {in[0]});
    case OpKind::kSoftmaxCrossEntropy:
    case OpKind::kSoftmaxCrossEntropyGrad:
      return LowerCrossEntropy(op, in[0], in[1]);
  }
  return Status::InvalidArgument(std::string(OpKindName(op.kind)) + " \"" + op.id +
                                 "\": no HLO lowering for this op kind");
}

Result<GraphLowering> GraphLowerer::Run() {
  if (!graph_.status().ok()) {
    return Status::InvalidArgument("graph \"" + graph_.name() +
                                   "\" has an error: " + graph_.status().ToString());
  }
  GraphLowering out;
  const std::vector<Op>& ops = graph_.ops();
  // Op ids keep their names even when a helper instruction was named first.
  std::vector<std::string> names;
  for (const Op& op : ops) names.push_back(Unique(Identifier(op.id)));
  std::vector<LoweredValue> values;
  std::vector<std::string> parameter_shapes;
  for (size_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    current_ = names[i];
    current_op_name_ = graph_.name() + "/" + op.id;
    splats_.clear();
    std::vector<LoweredValue> in;
    for (int k : op.input_index) in.push_back(values[static_cast<size_t>(k)]);
    const size_t first = entry_.size();
    Result<LoweredValue> v = LowerOp(op, in);
    if (!v.ok()) return v.status();
    if (v->index < static_cast<int>(first)) *v = Emit("copy", v->type, v->dims, "copy", {*v});
    entry_[static_cast<size_t>(v->index)].name = names[i];
    values.push_back(*v);
    if (op.kind == OpKind::kParameter || op.kind == OpKind::kConstant) {
      out.parameters.push_back(op.id);
      parameter_shapes.push_back(ShapeText(v->type, v->dims));
    }
  }
  // The ROOT tuple, outside any op.
  current_ = "tuple";
  current_op_name_.clear();
  LoweredInstruction root;
  root.name = Unique("tuple");
  root.opcode = "tuple";
  std::string result_shape;
  for (const std::string& id : graph_.outputs()) {
    const LoweredValue& v = values[static_cast<size_t>(graph_.IndexOf(id))];
    root.operands.push_back(v.index);
    result_shape += (result_shape.empty() ? "" : ", ") + ShapeText(v.type, v.dims);
    out.outputs.push_back(id);
  }
  root.shape = "(" + result_shape + ")";
  entry_.push_back(std::move(root));

  std::ostringstream text;
  std::string params;
  for (const std::string& s : parameter_shapes) params += (params.empty() ? "" : ", ") + s;
  text << "HloModule " << Identifier(graph_.name()) << ", entry_computation_layout={(" << params
       << ")->(" << result_shape << ")}\n\n";
  for (const auto& [name, computation] : reducers_) text << computation << "\n";
  text << "ENTRY main {\n";
  for (size_t i = 0; i < entry_.size(); ++i) {
    const LoweredInstruction& inst = entry_[i];
    text << (i + 1 == entry_.size() ? "  ROOT " : "  ") << inst.name << " = " << inst.shape << " "
         << inst.opcode << "(";
    for (size_t k = 0; k < inst.operands.size(); ++k) {
      text << (k ? ", " : "") << entry_[static_cast<size_t>(inst.operands[k])].name;
    }
    text << inst.literal << ")" << inst.attrs;
    if (!inst.op_name.empty()) text << ", metadata={op_name=" << Quoted(inst.op_name) << "}";
    text << "\n";
  }
  text << "}\n";
  out.text = text.str();
  return out;
}

}  // namespace from_graph_internal

Result<GraphLowering> LowerGraph(const Graph& graph) {
  return from_graph_internal::GraphLowerer(graph).Run();
}

PrimitiveType LoweredType(DType dtype) {
  switch (dtype) {
    case DType::kBF16:
      return PrimitiveType::kBF16;
    case DType::kI32:
      return PrimitiveType::kS32;
    case DType::kF32:
      break;
  }
  return PrimitiveType::kF32;
}

std::optional<Value> ArgumentOf(const Tensor& t, const ParallelContext& parallel) {
  // A job's step copies every weight: chunks into a recycled buffer, stopping with the job.
  constexpr int64_t kCopyGrain = int64_t{1} << 18;
  Array a = Array::Uninitialized(LoweredType(t.dtype()), t.shape().dims);
  const bool ints = t.dtype() == DType::kI32;
  const bool done =
      ParallelChunks(parallel, t.num_elements(), kCopyGrain, [&](int64_t begin, int64_t end) {
        if (ints) {
          std::copy(t.i32() + begin, t.i32() + end, a.i.begin() + begin);
        } else {
          std::copy(t.f32() + begin, t.f32() + end, a.f.begin() + begin);
        }
      });
  if (!done) return std::nullopt;
  return Value::Of(std::move(a));
}

Value ArgumentOf(const Tensor& t) { return *ArgumentOf(t, ParallelContext{}); }

}  // namespace tpuemu::engine::hlo
