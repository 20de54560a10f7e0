#include "engine/frontend/ir.h"

#include <algorithm>
#include <utility>

#include "engine/frontend/op_lowering.h"
#include "engine/hlo/tensor_bridge.h"

namespace tpuemu::engine {

Status Graph::Add(Op op) {
  std::string where = std::string(OpKindName(op.kind)) + " \"" + op.id + "\"";
  if (op.id.empty()) return Status::InvalidArgument(where + ": empty op id");
  if (index_.count(op.id)) return Status::InvalidArgument(where + ": duplicate op id");
  std::vector<const Op*> inputs;
  op.input_index.clear();
  for (const auto& in : op.inputs) {
    auto it = index_.find(in);
    if (it == index_.end()) {
      return Status::InvalidArgument(where + ": input '" + in +
                                     "' is not defined by an earlier op");
    }
    op.input_index.push_back(it->second);
    inputs.push_back(&ops_[static_cast<size_t>(it->second)]);
  }
  TPUEMU_RETURN_IF_ERROR(CheckOp(op, inputs));
  // The op's shape is that of the HLO it lowers to, held to the verifier's rules now rather than
  // when a job compiles.
  Result<hlo::Shape> lowered = hlo::LoweredShape(op, inputs);
  if (!lowered.ok()) return lowered.status();
  Result<DType> dtype = hlo::GraphDType(lowered->type);
  if (!dtype.ok()) return dtype.status();
  op.dtype = *dtype;
  op.shape = Shape(lowered->dims);
  TPUEMU_RETURN_IF_ERROR(CheckShape(op.shape, kMaxGraphElements, where + ": result"));
  index_.emplace(op.id, static_cast<int>(ops_.size()));
  ops_.push_back(std::move(op));
  return Status::Ok();
}

Status Graph::AddOutput(const std::string& id) {
  if (!index_.count(id)) {
    return Status::InvalidArgument("output '" + id + "' does not name an op");
  }
  if (std::find(outputs_.begin(), outputs_.end(), id) == outputs_.end()) outputs_.push_back(id);
  return Status::Ok();
}

const Op* Graph::Find(const std::string& id) const {
  auto it = index_.find(id);
  return it == index_.end() ? nullptr : &ops_[static_cast<size_t>(it->second)];
}

int Graph::IndexOf(const std::string& id) const {
  auto it = index_.find(id);
  return it == index_.end() ? -1 : it->second;
}

std::string Graph::Build(Op op) {
  if (op.id.empty()) {
    do {
      op.id = std::string(OpKindName(op.kind)) + "." + std::to_string(next_auto_id_++);
    } while (index_.count(op.id));
  }
  std::string id = op.id;
  if (!status_.ok()) return id;
  Status s = Add(std::move(op));
  if (!s.ok()) status_ = std::move(s);
  return id;
}

void Graph::MarkOutput(const std::string& id) {
  if (!status_.ok()) return;
  Status s = AddOutput(id);
  if (!s.ok()) status_ = std::move(s);
}

namespace {

Op MakeOp(OpKind kind, std::string id, std::vector<std::string> inputs) {
  Op op;
  op.kind = kind;
  op.id = std::move(id);
  op.inputs = std::move(inputs);
  return op;
}

}  // namespace

std::string Graph::Parameter(std::string id, Shape shape, DType dtype, Init init) {
  Op op = MakeOp(OpKind::kParameter, std::move(id), {});
  op.attrs.shape = std::move(shape);
  op.attrs.dtype = dtype;
  op.attrs.init = std::move(init);
  return Build(std::move(op));
}

std::string Graph::Constant(std::string id, Shape shape, Init init, DType dtype) {
  Op op = MakeOp(OpKind::kConstant, std::move(id), {});
  op.attrs.shape = std::move(shape);
  op.attrs.dtype = dtype;
  op.attrs.init = std::move(init);
  return Build(std::move(op));
}

std::string Graph::Dot(std::string id, const std::string& lhs, const std::string& rhs,
                       bool transpose_lhs, bool transpose_rhs) {
  Op op = MakeOp(OpKind::kDot, std::move(id), {lhs, rhs});
  op.attrs.transpose_lhs = transpose_lhs;
  op.attrs.transpose_rhs = transpose_rhs;
  return Build(std::move(op));
}

std::string Graph::Conv2D(std::string id, const std::string& x, const std::string& filter,
                          Conv2DParams params) {
  Op op = MakeOp(OpKind::kConv2D, std::move(id), {x, filter});
  op.attrs.conv = params;
  return Build(std::move(op));
}

std::string Graph::Conv2DBackpropInput(std::string id, Shape input_shape, const std::string& filter,
                                       const std::string& dy, Conv2DParams params) {
  Op op = MakeOp(OpKind::kConv2DBackpropInput, std::move(id), {filter, dy});
  op.attrs.shape = std::move(input_shape);
  op.attrs.conv = params;
  return Build(std::move(op));
}

std::string Graph::Conv2DBackpropFilter(std::string id, const std::string& x, Shape filter_shape,
                                        const std::string& dy, Conv2DParams params) {
  Op op = MakeOp(OpKind::kConv2DBackpropFilter, std::move(id), {x, dy});
  op.attrs.shape = std::move(filter_shape);
  op.attrs.conv = params;
  return Build(std::move(op));
}

std::string Graph::Binary(OpKind kind, std::string id, const std::string& a, const std::string& b) {
  return Build(MakeOp(kind, std::move(id), {a, b}));
}
std::string Graph::Add(std::string id, const std::string& a, const std::string& b) {
  return Binary(OpKind::kAdd, std::move(id), a, b);
}
std::string Graph::Sub(std::string id, const std::string& a, const std::string& b) {
  return Binary(OpKind::kSub, std::move(id), a, b);
}
std::string Graph::Mul(std::string id, const std::string& a, const std::string& b) {
  return Binary(OpKind::kMul, std::move(id), a, b);
}
std::string Graph::Div(std::string id, const std::string& a, const std::string& b) {
  return Binary(OpKind::kDiv, std::move(id), a, b);
}
std::string Graph::Max(std::string id, const std::string& a, const std::string& b) {
  return Binary(OpKind::kMax, std::move(id), a, b);
}
std::string Graph::Min(std::string id, const std::string& a, const std::string& b) {
  return Binary(OpKind::kMin, std::move(id), a, b);
}

std::string Graph::Unary(OpKind kind, std::string id, const std::string& x) {
  return Build(MakeOp(kind, std::move(id), {x}));
}
std::string Graph::Neg(std::string id, const std::string& x) {
  return Unary(OpKind::kNeg, std::move(id), x);
}
std::string Graph::Relu(std::string id, const std::string& x) {
  return Unary(OpKind::kRelu, std::move(id), x);
}
std::string Graph::Gelu(std::string id, const std::string& x) {
  return Unary(OpKind::kGelu, std::move(id), x);
}
std::string Graph::Tanh(std::string id, const std::string& x) {
  return Unary(OpKind::kTanh, std::move(id), x);
}
std::string Graph::Exp(std::string id, const std::string& x) {
  return Unary(OpKind::kExp, std::move(id), x);
}
std::string Graph::Log(std::string id, const std::string& x) {
  return Unary(OpKind::kLog, std::move(id), x);
}
std::string Graph::Rsqrt(std::string id, const std::string& x) {
  return Unary(OpKind::kRsqrt, std::move(id), x);
}

std::string Graph::ReluGrad(std::string id, const std::string& x, const std::string& dy) {
  return Build(MakeOp(OpKind::kReluGrad, std::move(id), {x, dy}));
}
std::string Graph::GeluGrad(std::string id, const std::string& x, const std::string& dy) {
  return Build(MakeOp(OpKind::kGeluGrad, std::move(id), {x, dy}));
}

std::string Graph::Softmax(std::string id, const std::string& x, int64_t axis) {
  Op op = MakeOp(OpKind::kSoftmax, std::move(id), {x});
  op.attrs.axis = axis;
  return Build(std::move(op));
}

std::string Graph::Reduce(std::string id, const std::string& x, ReduceKind kind,
                          std::vector<int64_t> axes, bool keep_dims) {
  Op op = MakeOp(OpKind::kReduce, std::move(id), {x});
  op.attrs.reduce = kind;
  op.attrs.axes = std::move(axes);
  op.attrs.keep_dims = keep_dims;
  return Build(std::move(op));
}

std::string Graph::Broadcast(std::string id, const std::string& x, Shape shape,
                             std::optional<std::vector<int64_t>> broadcast_dims) {
  Op op = MakeOp(OpKind::kBroadcast, std::move(id), {x});
  op.attrs.shape = std::move(shape);
  op.attrs.broadcast_dims = std::move(broadcast_dims);
  return Build(std::move(op));
}

std::string Graph::Reshape(std::string id, const std::string& x, Shape shape) {
  Op op = MakeOp(OpKind::kReshape, std::move(id), {x});
  op.attrs.shape = std::move(shape);
  return Build(std::move(op));
}

std::string Graph::Transpose(std::string id, const std::string& x, std::vector<int64_t> perm) {
  Op op = MakeOp(OpKind::kTranspose, std::move(id), {x});
  op.attrs.perm = std::move(perm);
  return Build(std::move(op));
}

std::string Graph::Concat(std::string id, const std::vector<std::string>& xs, int64_t axis) {
  Op op = MakeOp(OpKind::kConcat, std::move(id), xs);
  op.attrs.axis = axis;
  return Build(std::move(op));
}

std::string Graph::Slice(std::string id, const std::string& x, std::vector<int64_t> start,
                         std::vector<int64_t> limit) {
  Op op = MakeOp(OpKind::kSlice, std::move(id), {x});
  op.attrs.start = std::move(start);
  op.attrs.limit = std::move(limit);
  return Build(std::move(op));
}

std::string Graph::Convert(std::string id, const std::string& x, DType dtype) {
  Op op = MakeOp(OpKind::kConvert, std::move(id), {x});
  op.attrs.dtype = dtype;
  return Build(std::move(op));
}

std::string Graph::SoftmaxCrossEntropy(std::string id, const std::string& logits,
                                       const std::string& labels) {
  return Build(MakeOp(OpKind::kSoftmaxCrossEntropy, std::move(id), {logits, labels}));
}

std::string Graph::SoftmaxCrossEntropyGrad(std::string id, const std::string& logits,
                                           const std::string& labels) {
  return Build(MakeOp(OpKind::kSoftmaxCrossEntropyGrad, std::move(id), {logits, labels}));
}

}  // namespace tpuemu::engine
