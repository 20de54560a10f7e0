// The engine's IR: a Graph of ops in topological order, each with a unique string id, a kind,
// input ids, attributes and its inferred output dtype + shape.
//
// Two ways in: Graph::Add(Op) validates one op and lowers it to HLO under the verifier's rules,
// which give its shape (INVALID_ARGUMENT naming the op and the shapes, e.g. `dot "logits":
// contracting dimension sizes differ: f32[64,128] dim 1 is 128, f32[256,10] dim 0 is 256`), and
// the builder methods (Parameter, Dot, Relu, ...) for C++ callers. Builders use a sticky error:
// the first failure is kept in status() and later builder calls become no-ops that return their
// id, so a long forward+backward construction is checked once at the end:
//   Graph g("mlp");
//   auto x = g.Parameter("x", {64, 128});
//   auto w = g.Constant("w", {128, 10}, Init::Random(1, Init::Distribution::kNormal, 0.02));
//   auto y = g.Relu("y", g.Dot("logits", x, w));
//   g.MarkOutput(y);
//   TPUEMU_RETURN_IF_ERROR(g.status());
// An empty id asks for a generated one ("dot.3").
//
// Layouts: conv2d is NHWC with HWIO filters [fh, fw, cin, cout]. dot takes lhs [..., m, k] and
// rhs [..., k, n] (transpose_lhs: lhs is [..., k, m]; transpose_rhs: rhs is [..., n, k]); leading
// batch dims must match when both operands have them, and a rank-2 operand is shared across the
// other's batch. Binary elementwise ops broadcast numpy-style. Arithmetic needs f32/bf16 operands
// of the same dtype; int32 is for labels and data movement (use convert).
// Not thread-safe for mutation; a finished Graph may be read from any thread.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
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
// "add, broadcast, ...": every op name, sorted.
std::string KnownOpNames();
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

class Graph {
 public:
  explicit Graph(std::string name = "program") : name_(std::move(name)) {}

  // Appends op after checking its id (non-empty, unique), inputs (defined earlier, right count)
  // and what it means (CheckOp), and lowering it to HLO instruction by instruction under the
  // verifier's shape rules, which give its dtype + shape (engine/frontend/from_graph.h
  // LoweredShape). INVALID_ARGUMENT naming the op on error; the graph is unchanged then.
  Status Add(Op op);
  // INVALID_ARGUMENT unless id names an op; repeated names are kept once.
  Status AddOutput(const std::string& id);

  // Builders (see the file comment for the sticky-error contract). Each returns the op id.
  std::string Parameter(std::string id, Shape shape, DType dtype = DType::kF32, Init init = {});
  std::string Constant(std::string id, Shape shape, Init init, DType dtype = DType::kF32);
  std::string Dot(std::string id, const std::string& lhs, const std::string& rhs,
                  bool transpose_lhs = false, bool transpose_rhs = false);
  std::string Conv2D(std::string id, const std::string& x, const std::string& filter,
                     Conv2DParams params = {});
  // dx of conv2d(x: input_shape, filter) given dy.
  std::string Conv2DBackpropInput(std::string id, Shape input_shape, const std::string& filter,
                                  const std::string& dy, Conv2DParams params = {});
  // dfilter of conv2d(x, filter: filter_shape) given dy.
  std::string Conv2DBackpropFilter(std::string id, const std::string& x, Shape filter_shape,
                                   const std::string& dy, Conv2DParams params = {});
  std::string Binary(OpKind kind, std::string id, const std::string& a, const std::string& b);
  std::string Add(std::string id, const std::string& a, const std::string& b);
  std::string Sub(std::string id, const std::string& a, const std::string& b);
  std::string Mul(std::string id, const std::string& a, const std::string& b);
  std::string Div(std::string id, const std::string& a, const std::string& b);
  std::string Max(std::string id, const std::string& a, const std::string& b);
  std::string Min(std::string id, const std::string& a, const std::string& b);
  std::string Unary(OpKind kind, std::string id, const std::string& x);
  std::string Neg(std::string id, const std::string& x);
  std::string Relu(std::string id, const std::string& x);
  std::string Gelu(std::string id, const std::string& x);  // tanh approximation (jax default)
  std::string Tanh(std::string id, const std::string& x);
  std::string Exp(std::string id, const std::string& x);
  std::string Log(std::string id, const std::string& x);
  std::string Rsqrt(std::string id, const std::string& x);
  std::string ReluGrad(std::string id, const std::string& x, const std::string& dy);
  std::string GeluGrad(std::string id, const std::string& x, const std::string& dy);
  std::string Softmax(std::string id, const std::string& x, int64_t axis = -1);
  std::string Reduce(std::string id, const std::string& x, ReduceKind kind,
                     std::vector<int64_t> axes = {}, bool keep_dims = false);
  // Numpy-style when broadcast_dims is empty; else operand dim i maps to output broadcast_dims[i].
  std::string Broadcast(std::string id, const std::string& x, Shape shape,
                        std::optional<std::vector<int64_t>> broadcast_dims = std::nullopt);
  // One dim may be -1 (inferred).
  std::string Reshape(std::string id, const std::string& x, Shape shape);
  std::string Transpose(std::string id, const std::string& x, std::vector<int64_t> perm);
  std::string Concat(std::string id, const std::vector<std::string>& xs, int64_t axis);
  std::string Slice(std::string id, const std::string& x, std::vector<int64_t> start,
                    std::vector<int64_t> limit);
  std::string Convert(std::string id, const std::string& x, DType dtype);
  // logits f32[b,c], labels int32[b] -> f32[] (mean over the batch).
  std::string SoftmaxCrossEntropy(std::string id, const std::string& logits,
                                  const std::string& labels);
  // -> f32[b,c] = (softmax(logits) - onehot(labels)) / b: the gradient of the mean loss.
  std::string SoftmaxCrossEntropyGrad(std::string id, const std::string& logits,
                                      const std::string& labels);
  void MarkOutput(const std::string& id);

  // OK, or the first error a builder call hit.
  const Status& status() const { return status_; }
  const std::string& name() const { return name_; }
  const std::vector<Op>& ops() const { return ops_; }
  const std::vector<std::string>& outputs() const { return outputs_; }
  // nullptr / -1 when absent.
  const Op* Find(const std::string& id) const;
  int IndexOf(const std::string& id) const;

 private:
  std::string Build(Op op);  // the sticky-error wrapper around Add

  std::string name_;
  std::vector<Op> ops_;
  std::unordered_map<std::string, int> index_;
  std::vector<std::string> outputs_;
  Status status_;
  int next_auto_id_ = 0;
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
