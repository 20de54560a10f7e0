// The op lowering (op_lowering.h): the emitter of entry instructions (onto a ModuleBuilder,
// builder.h) and the per-kind dispatch. The composite ops' lowerings are in op_lowering_ops.cpp;
// each writes the HLO JAX would trace for the op, keeping the native kernels' order of operations.
#include "engine/frontend/op_lowering.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <memory>
#include <numeric>
#include <tuple>

#include "engine/frontend/op_lowering_internal.h"
#include "engine/hlo/tensor_bridge.h"

namespace tpuemu::engine::hlo {
namespace op_lowering_internal {

std::string OpLowerer::Identifier(std::string_view id) {
  std::string s;
  for (char c : id) {
    const bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
    s += ok ? c : '_';
  }
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) s = "_" + s;
  return s;
}

std::string OpLowerer::Unique(const std::string& name) {
  std::string n = name;
  for (int k = 1; used_names_.count(n); ++k) n = name + "." + std::to_string(k);
  used_names_.insert(n);
  return n;
}

LoweredValue OpLowerer::Emit(const std::string& step, PrimitiveType type, std::vector<int64_t> dims,
                             Opcode opcode, const std::vector<LoweredValue>& operands,
                             const SetAttributes& set) {
  LoweredValue v = Append(step, Shape::Array(type, dims), opcode, operands, set);
  if (v.index < 0) v = {-1, type, std::move(dims)};
  return v;
}

LoweredValue OpLowerer::Infer(const std::string& step, Opcode opcode,
                              const std::vector<LoweredValue>& operands, const SetAttributes& set) {
  return Append(step, Shape{}, opcode, operands, set);
}

LoweredValue OpLowerer::Append(const std::string& step, Shape shape, Opcode opcode,
                               const std::vector<LoweredValue>& operands,
                               const SetAttributes& set) {
  const LoweredValue failed{-1, PrimitiveType::kInvalid, {}};
  if (!status_.ok()) return failed;
  Instruction inst;
  inst.name = Unique(current_ + "." + step);
  inst.opcode = opcode;
  inst.shape = std::move(shape);
  for (const LoweredValue& v : operands) inst.operands.push_back(v.index);
  inst.op_name = current_op_name_;
  if (set) set(inst);
  Result<int> index = builder_.Add(std::move(inst));
  if (!index.ok()) {
    status_ = index.status();
    return failed;
  }
  const Shape& added = builder_.at(*index).shape;
  return {*index, added.type, added.dims};
}

LoweredValue OpLowerer::Splat(PrimitiveType type, double v, const std::vector<int64_t>& dims) {
  const auto key = std::make_tuple(type, v, dims);
  if (auto it = splats_.find(key); it != splats_.end()) return it->second;
  LoweredValue c;
  if (dims.empty()) {
    Array literal = Array::Zeros(type, {});
    literal.SetDouble(0, type == PrimitiveType::kS32 ? static_cast<double>(std::llround(v)) : v);
    auto value = std::make_shared<const Value>(Value::Of(std::move(literal)));
    c = Emit("constant", type, {}, Opcode::kConstant, {},
             [&](Instruction& inst) { inst.literal = value; });
  } else {
    c = Emit("broadcast", type, dims, Opcode::kBroadcast, {Splat(type, v, {})},
             [](Instruction& inst) { inst.has_dimensions = true; });
  }
  splats_[key] = c;
  return c;
}

LoweredValue OpLowerer::BroadcastInDim(const LoweredValue& x, const std::vector<int64_t>& dims,
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
  return Emit("broadcast", x.type, dims, Opcode::kBroadcast, {y}, [&](Instruction& inst) {
    inst.dimensions = kept_mapping;
    inst.has_dimensions = true;
  });
}

LoweredValue OpLowerer::NumpyBroadcast(const LoweredValue& x, const std::vector<int64_t>& dims) {
  if (x.dims == dims) return x;
  std::vector<int64_t> mapping(x.dims.size());
  std::iota(mapping.begin(), mapping.end(), static_cast<int64_t>(dims.size() - x.dims.size()));
  return BroadcastInDim(x, dims, mapping);
}

LoweredValue OpLowerer::Convert(const LoweredValue& x, PrimitiveType type) {
  if (x.type == type) return x;
  return Emit("convert", type, x.dims, Opcode::kConvert, {x});
}

LoweredValue OpLowerer::Map(Opcode opcode, const LoweredValue& x) {
  return Infer(std::string(OpcodeName(opcode)), opcode, {x});
}

LoweredValue OpLowerer::Map(Opcode opcode, const LoweredValue& a, const LoweredValue& b) {
  return Infer(std::string(OpcodeName(opcode)), opcode, {a, b});
}

LoweredValue OpLowerer::Compare(Direction direction, const LoweredValue& a, const LoweredValue& b) {
  return Infer("compare", Opcode::kCompare, {a, b}, [&](Instruction& inst) {
    inst.mutable_attrs().direction = direction;
    inst.mutable_attrs().has_direction = true;
  });
}

LoweredValue OpLowerer::Select(const LoweredValue& pred, const LoweredValue& a,
                               const LoweredValue& b) {
  return Infer("select", Opcode::kSelect, {pred, a, b});
}

LoweredValue OpLowerer::Reshape(const LoweredValue& x, const std::vector<int64_t>& dims) {
  return Emit("reshape", x.type, dims, Opcode::kReshape, {x});
}

LoweredValue OpLowerer::Transpose(const LoweredValue& x, const std::vector<int64_t>& perm) {
  return Infer("transpose", Opcode::kTranspose, {x}, [&](Instruction& inst) {
    inst.dimensions = perm;
    inst.has_dimensions = true;
  });
}

LoweredValue OpLowerer::Reduce(const LoweredValue& x, const std::vector<int64_t>& axes, bool max) {
  if (!status_.ok()) return {};
  const LoweredValue init = Splat(x.type, max ? -std::numeric_limits<double>::infinity() : 0.0, {});
  const int reducer = builder_.Reducer(max, x.type);
  return Infer(max ? "reduce_max" : "reduce_sum", Opcode::kReduce, {x, init},
               [&](Instruction& inst) {
                 inst.dimensions = axes;
                 inst.has_dimensions = true;
                 inst.called = {reducer};
               });
}

LoweredValue OpLowerer::Unreduce(const LoweredValue& x, const std::vector<int64_t>& dims,
                                 int64_t axis) {
  std::vector<int64_t> mapping;
  for (int64_t i = 0; i < static_cast<int64_t>(dims.size()); ++i) {
    if (i != axis) mapping.push_back(i);
  }
  return BroadcastInDim(x, dims, mapping);
}

namespace {

// The numpy-broadcast shape of two operands' dims (the graph checked that they broadcast).
std::vector<int64_t> BroadcastDims(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  std::vector<int64_t> out = a.size() >= b.size() ? a : b;
  const std::vector<int64_t>& other = a.size() >= b.size() ? b : a;
  const size_t shift = out.size() - other.size();
  for (size_t i = 0; i < other.size(); ++i) {
    if (out[shift + i] == 1) out[shift + i] = other[i];
  }
  return out;
}

}  // namespace

LoweredValue OpLowerer::LowerOp(const Op& op, const std::vector<LoweredValue>& in) {
  auto binary = [&](Opcode opcode) {
    const std::vector<int64_t> dims = BroadcastDims(in[0].dims, in[1].dims);
    const LoweredValue a = NumpyBroadcast(in[0], dims);
    const LoweredValue b = NumpyBroadcast(in[1], dims);
    return Map(opcode, a, b);
  };
  switch (op.kind) {
    case OpKind::kParameter:
    case OpKind::kConstant: {
      const int number = next_parameter_++;
      return Emit("parameter", LoweredType(op.attrs.dtype), op.attrs.shape.dims, Opcode::kParameter,
                  {}, [&](Instruction& inst) { inst.index = number; });
    }
    case OpKind::kDot:
      return LowerDot(op, in[0], in[1]);
    case OpKind::kConv2D:
      return LowerConv(op, in[0], in[1]);
    case OpKind::kConv2DBackpropInput:
      return LowerConvBackpropInput(op, in[0], in[1]);
    case OpKind::kConv2DBackpropFilter:
      return LowerConvBackpropFilter(op, in[0], in[1]);
    case OpKind::kAdd:
      return binary(Opcode::kAdd);
    case OpKind::kSub:
      return binary(Opcode::kSubtract);
    case OpKind::kMul:
      return binary(Opcode::kMultiply);
    case OpKind::kDiv:
      return binary(Opcode::kDivide);
    case OpKind::kMax:
      return binary(Opcode::kMaximum);
    case OpKind::kMin:
      return binary(Opcode::kMinimum);
    case OpKind::kNeg:
      return Map(Opcode::kNegate, in[0]);
    case OpKind::kTanh:
      return Map(Opcode::kTanh, in[0]);
    case OpKind::kExp:
      return Map(Opcode::kExp, in[0]);
    case OpKind::kLog:
      return Map(Opcode::kLog, in[0]);
    case OpKind::kRsqrt:
      return Map(Opcode::kRsqrt, in[0]);
    case OpKind::kRelu:  // jax.nn.relu: max(x, 0)
      return Map(Opcode::kMaximum, in[0], Splat(in[0].type, 0, in[0].dims));
    case OpKind::kGelu:
      return LowerGelu(in[0]);
    case OpKind::kReluGrad: {  // dy where x > 0 (jax's relu jvp), else 0
      const LoweredValue zeros = Splat(in[0].type, 0, in[0].dims);
      const LoweredValue positive = Compare(Direction::kGt, in[0], zeros);
      return Select(positive, in[1], zeros);
    }
    case OpKind::kGeluGrad:
      return LowerGeluGrad(in[0], in[1]);
    case OpKind::kSoftmax:
      return LowerSoftmax(op, in[0]);
    case OpKind::kReduce:
      return LowerReduce(op, in[0]);
    case OpKind::kBroadcast:
      return LowerBroadcast(op, in[0]);
    case OpKind::kReshape:  // a -1 in the target was resolved by the graph's checks
      return Reshape(in[0], op.attrs.shape.dims);
    case OpKind::kTranspose:
      return Transpose(in[0], op.attrs.perm);
    case OpKind::kConcat: {
      const int64_t rank = static_cast<int64_t>(in[0].dims.size());
      const int64_t axis = op.attrs.axis < 0 ? op.attrs.axis + rank : op.attrs.axis;
      return Infer("concatenate", Opcode::kConcatenate, in, [&](Instruction& inst) {
        inst.dimensions = {axis};
        inst.has_dimensions = true;
      });
    }
    case OpKind::kSlice:
      return Infer("slice", Opcode::kSlice, {in[0]}, [&](Instruction& inst) {
        Attributes& a = inst.mutable_attrs();
        a.slice_start = op.attrs.start;
        a.slice_limit = op.attrs.limit;
        a.slice_stride.assign(op.attrs.start.size(), 1);
      });
    case OpKind::kConvert:  // always an instruction, even to the same type: the op has a name
      return Emit("convert", LoweredType(op.attrs.dtype), in[0].dims, Opcode::kConvert, {in[0]});
    case OpKind::kSoftmaxCrossEntropy:
    case OpKind::kSoftmaxCrossEntropyGrad:
      return LowerCrossEntropy(op, in[0], in[1]);
  }
  status_ = Status::InvalidArgument("no HLO lowering for this op kind");
  return {};
}

LoweredValue OpLowerer::LowerNamed(const Op& op, const std::string& name,
                                   const std::vector<LoweredValue>& in) {
  current_ = name;
  current_op_name_ = graph_name_ + "/" + op.id;
  splats_.clear();
  const int first = builder_.size();
  LoweredValue v = LowerOp(op, in);
  if (status_.ok() && v.index < first) v = Emit("copy", v.type, v.dims, Opcode::kCopy, {v});
  if (!status_.ok()) {
    // The verifier's words, after the helper instruction it names ("%x.dot (dot): ").
    const std::string& message = status_.message();
    const size_t cut = message.rfind('%', 0) == 0 ? message.find("): ") : std::string::npos;
    status_ =
        Status::InvalidArgument(std::string(OpKindName(op.kind)) + " \"" + op.id + "\": " +
                                (cut == std::string::npos ? message : message.substr(cut + 3)));
    return v;
  }
  builder_.Rename(v.index, name);
  return v;
}

Result<Shape> OpLowerer::LowerAlone(const Op& op, const std::vector<const Op*>& inputs) {
  std::vector<LoweredValue> in;
  for (const Op* input : inputs) {
    const int number = next_parameter_++;
    current_ = Unique(Identifier(input->id));
    in.push_back(Emit("parameter", LoweredType(input->dtype), input->shape.dims, Opcode::kParameter,
                      {}, [&](Instruction& inst) { inst.index = number; }));
  }
  if (!status_.ok()) return status_;
  const LoweredValue v = LowerNamed(op, Unique(Identifier(op.id)), in);
  if (!status_.ok()) return status_;
  return builder_.at(v.index).shape;
}

}  // namespace op_lowering_internal

Result<Shape> LoweredShape(const Op& op, const std::vector<const Op*>& inputs) {
  return op_lowering_internal::OpLowerer("check").LowerAlone(op, inputs);
}

}  // namespace tpuemu::engine::hlo
