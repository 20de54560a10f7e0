#include "engine/frontend/op.h"

#include <algorithm>

namespace tpuemu::engine {
namespace {

struct KindName {
  OpKind kind;
  std::string_view name;
};

constexpr KindName kKindNames[] = {
    {OpKind::kParameter, "parameter"},
    {OpKind::kConstant, "constant"},
    {OpKind::kDot, "dot"},
    {OpKind::kConv2D, "conv2d"},
    {OpKind::kConv2DBackpropInput, "conv2d_backprop_input"},
    {OpKind::kConv2DBackpropFilter, "conv2d_backprop_filter"},
    {OpKind::kAdd, "add"},
    {OpKind::kSub, "sub"},
    {OpKind::kMul, "mul"},
    {OpKind::kDiv, "div"},
    {OpKind::kMax, "max"},
    {OpKind::kMin, "min"},
    {OpKind::kNeg, "neg"},
    {OpKind::kRelu, "relu"},
    {OpKind::kGelu, "gelu"},
    {OpKind::kTanh, "tanh"},
    {OpKind::kExp, "exp"},
    {OpKind::kLog, "log"},
    {OpKind::kRsqrt, "rsqrt"},
    {OpKind::kReluGrad, "relu_grad"},
    {OpKind::kGeluGrad, "gelu_grad"},
    {OpKind::kSoftmax, "softmax"},
    {OpKind::kReduce, "reduce"},
    {OpKind::kBroadcast, "broadcast"},
    {OpKind::kReshape, "reshape"},
    {OpKind::kTranspose, "transpose"},
    {OpKind::kConcat, "concat"},
    {OpKind::kSlice, "slice"},
    {OpKind::kConvert, "convert"},
    {OpKind::kSoftmaxCrossEntropy, "softmax_cross_entropy"},
    {OpKind::kSoftmaxCrossEntropyGrad, "softmax_cross_entropy_grad"},
};

// "add, broadcast, ...": every op name, sorted.
std::string KnownOpNames() {
  std::vector<std::string_view> names;
  for (const auto& kn : kKindNames) names.push_back(kn.name);
  std::sort(names.begin(), names.end());
  std::string s;
  for (auto n : names) {
    if (!s.empty()) s += ", ";
    s += n;
  }
  return s;
}

}  // namespace

std::string_view OpKindName(OpKind kind) {
  for (const auto& kn : kKindNames) {
    if (kn.kind == kind) return kn.name;
  }
  return "?";
}

Result<OpKind> ParseOpKind(std::string_view name) {
  for (const auto& kn : kKindNames) {
    if (kn.name == name) return kn.kind;
  }
  return Status::InvalidArgument("unknown op '" + std::string(name) +
                                 "'; known ops: " + KnownOpNames());
}

bool IsElementwiseBinary(OpKind kind) {
  switch (kind) {
    case OpKind::kAdd:
    case OpKind::kSub:
    case OpKind::kMul:
    case OpKind::kDiv:
    case OpKind::kMax:
    case OpKind::kMin:
      return true;
    default:
      return false;
  }
}

bool IsElementwiseUnary(OpKind kind) {
  switch (kind) {
    case OpKind::kNeg:
    case OpKind::kRelu:
    case OpKind::kGelu:
    case OpKind::kTanh:
    case OpKind::kExp:
    case OpKind::kLog:
    case OpKind::kRsqrt:
      return true;
    default:
      return false;
  }
}

bool IsMatmulOp(OpKind kind) {
  return kind == OpKind::kDot || kind == OpKind::kConv2D || kind == OpKind::kConv2DBackpropInput ||
         kind == OpKind::kConv2DBackpropFilter;
}

std::string_view ReduceKindName(ReduceKind kind) {
  switch (kind) {
    case ReduceKind::kSum:
      return "sum";
    case ReduceKind::kMax:
      return "max";
    case ReduceKind::kMean:
      return "mean";
  }
  return "?";
}

Init Init::Random(uint64_t seed, Distribution distribution, double scale) {
  Init init;
  init.kind = Kind::kRandom;
  init.seed = seed;
  init.distribution = distribution;
  init.scale = scale;
  return init;
}

Init Init::Values(std::vector<double> values) {
  Init init;
  init.kind = Kind::kValues;
  init.values = std::move(values);
  return init;
}

Init Init::Fill(double value) {
  Init init;
  init.kind = Kind::kFill;
  init.fill = value;
  return init;
}

}  // namespace tpuemu::engine
