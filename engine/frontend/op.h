// The ops of the engine's IR (ir.h's Graph holds them): each op's kind, attributes, inputs and,
// once Graph::Add has checked and lowered it, its dtype and shape; what an op means (CheckOp).
// Apart from Graph so that the lowering of one op (op_lowering.h), which Graph::Add asks for an
// op's shape, needs only this file. Value types; thread-compatible.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "engine/runtime/tensor.h"

namespace tpuemu::engine {

enum class OpKind {
  kParameter,
  kConstant,
  kDot,
  kConv2D,
  kConv2DBackpropInput,
  kConv2DBackpropFilter,
  kAdd,
  kSub,
  kMul,
  kDiv,
  kMax,
  kMin,
  kNeg,
  kRelu,
  kGelu,
  kTanh,
  kExp,
  kLog,
  kRsqrt,
  kReluGrad,
  kGeluGrad,
  kSoftmax,
  kReduce,
  kBroadcast,
  kReshape,
  kTranspose,
  kConcat,
  kSlice,
  kConvert,
  kSoftmaxCrossEntropy,
  kSoftmaxCrossEntropyGrad,
};

// The JSON name: "dot", "conv2d_backprop_input", "softmax_cross_entropy", ...
std::string_view OpKindName(OpKind kind);
// INVALID_ARGUMENT listing every known op when the name is unknown.
Result<OpKind> ParseOpKind(std::string_view name);
bool IsElementwiseBinary(OpKind kind);
bool IsElementwiseUnary(OpKind kind);
// Ops that run on the MXU (dot, conv2d and its backprops); the rest run on the vector unit.
bool IsMatmulOp(OpKind kind);

// How a constant (or an unfed parameter) gets its values. Values are *data*: they are not part of
// the compile-cache key and are materialised at execution time.
struct Init {
  enum class Kind { kNone, kRandom, kValues, kFill };
  enum class Distribution { kNormal, kUniform };
  Kind kind = Kind::kNone;
  uint64_t seed = 0;
  Distribution distribution = Distribution::kNormal;
  double scale = 1.0;  // normal: standard deviation; uniform: values in [-scale, scale)
  std::vector<double> values;
  double fill = 0.0;

  static Init Random(uint64_t seed, Distribution distribution = Distribution::kNormal,
                     double scale = 1.0);
  static Init Values(std::vector<double> values);
  static Init Fill(double value);
};

enum class ReduceKind { kSum, kMax, kMean };
std::string_view ReduceKindName(ReduceKind kind);

enum class ConvPadding { kValid, kSame, kExplicit };

struct Conv2DParams {
  int64_t stride_h = 1;
  int64_t stride_w = 1;
  ConvPadding padding = ConvPadding::kValid;
  std::array<int64_t, 4> pads{};  // top, bottom, left, right; used when padding == kExplicit
};

// Attributes of every kind in one struct; each kind reads only its own fields.
struct OpAttrs {
  Shape shape;  // parameter/constant/broadcast/reshape target; conv2d_backprop_* result shape
  DType dtype = DType::kF32;  // parameter/constant/convert
  Init init;                  // constant (required), parameter (optional)
  bool transpose_lhs = false;
  bool transpose_rhs = false;
  Conv2DParams conv;
  ReduceKind reduce = ReduceKind::kSum;
  std::vector<int64_t> axes;  // reduce; empty = all axes
  bool keep_dims = false;
  std::optional<std::vector<int64_t>> broadcast_dims;  // explicit broadcast; else numpy-style
  std::vector<int64_t> perm;                           // transpose
  int64_t axis = 0;                                    // concat; softmax (negative = from end)
  std::vector<int64_t> start, limit;                   // slice: [start, limit) per dim
};

struct Op {
  std::string id;
  OpKind kind = OpKind::kParameter;
  std::vector<std::string> inputs;
  OpAttrs attrs;
  // Filled by Graph::Add:
  std::vector<int> input_index;  // positions of the inputs in Graph::ops()
  DType dtype = DType::kF32;
  Shape shape;
};

// Checks what op means (inputs given in order): arity, attributes, dtypes, numpy broadcasting,
// SAME padding, labels; resolves a reshape's -1 in op.attrs.shape. INVALID_ARGUMENT `<kind>
// "<id>": <what>` on error. The shape rules of the HLO it lowers to are the verifier's, and its
// shape comes from them (Graph::Add).
Status CheckOp(Op& op, const std::vector<const Op*>& inputs);

// The most elements a graph's tensor may have: only overflow is refused here; the per-tensor
// budget is a compile option (compiler.h).
inline constexpr int64_t kMaxGraphElements = int64_t{1} << 50;

// Output spatial size and the leading pad of conv2d along one dim.
struct ConvDim {
  int64_t out = 0;
  int64_t pad_before = 0;
};
ConvDim ConvOutputDim(int64_t in, int64_t filter, int64_t stride, ConvPadding padding,
                      int64_t pad_before, int64_t pad_after);

}  // namespace tpuemu::engine
