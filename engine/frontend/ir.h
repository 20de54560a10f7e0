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
// The ops themselves (kinds, attributes, CheckOp): op.h.
// Not thread-safe for mutation; a finished Graph may be read from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "engine/frontend/op.h"
#include "engine/runtime/tensor.h"

namespace tpuemu::engine {

class Graph {
 public:
  explicit Graph(std::string name = "program") : name_(std::move(name)) {}

  // Appends op after checking its id (non-empty, unique), inputs (defined earlier, right count)
  // and what it means (CheckOp), and lowering it to HLO instruction by instruction under the
  // verifier's shape rules, which give its dtype + shape (engine/frontend/op_lowering.h
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

}  // namespace tpuemu::engine
