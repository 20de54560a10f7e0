// Internals of the op lowering (engine/frontend/op_lowering.h), shared by op_lowering.cpp (the
// emitter and the per-kind dispatch), op_lowering_ops.cpp (the composite ops: dot, the
// convolutions, gelu, softmax, reduce, broadcast, cross-entropy) and from_graph.cpp (LowerGraph,
// which lowers a graph's ops in order into one module). Not for other callers.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "engine/frontend/op_lowering.h"
#include "engine/hlo/builder.h"
#include "engine/hlo/module.h"

namespace tpuemu::engine::hlo::op_lowering_internal {

struct LoweredValue {
  int index = -1;  // into the entry's instructions (builder.h); -1 after a failed Emit
  PrimitiveType type = PrimitiveType::kF32;
  std::vector<int64_t> dims;
};

// One lowering: construct, then LowerAlone (one op) once, or LowerNamed for each op of a graph in
// order and Finish (LowerGraph, from_graph.cpp). Instructions go to a ModuleBuilder, which checks
// each against the verifier's shape rules as it is added; an op's last instruction takes the op's
// own name after its helpers.
class OpLowerer {
 public:
  explicit OpLowerer(const std::string& graph_name)
      : graph_name_(graph_name), builder_(Identifier(graph_name)) {}

  // `op` with its inputs as the entry's parameters: the shape of what it lowers to
  // (LoweredShape, op_lowering.h).
  Result<Shape> LowerAlone(const Op& op, const std::vector<const Op*>& inputs);

  // Lowers `op` (its inputs' values in `in`) as the instruction named `name`: status() says how
  // it went (INVALID_ARGUMENT naming the op).
  LoweredValue LowerNamed(const Op& op, const std::string& name,
                          const std::vector<LoweredValue>& in);
  const Status& status() const { return status_; }
  // The module with `root`'s instructions as its ROOT tuple (ModuleBuilder::Finish).
  Result<Module> Finish(const std::vector<int>& root, const std::string& tuple_name) {
    return builder_.Finish(root, tuple_name);
  }
  // `name`, or `name` with a suffix when an instruction has it already.
  std::string Unique(const std::string& name);

  using SetAttributes = std::function<void(Instruction&)>;

  // An HLO identifier ([A-Za-z_][A-Za-z0-9_.-]*) close to `id`.
  static std::string Identifier(std::string_view id);

 private:
  // Appends an `opcode` instruction named "<op>.<step>" of the declared type and dims, with
  // `set` filling its attributes, and returns its value. A failure (the declared shape is not
  // what the verifier infers: a bug in the lowering) is kept in status_ and later Emits do
  // nothing; the value keeps the declared type and dims so the op's lowering runs to its end.
  LoweredValue Emit(const std::string& step, PrimitiveType type, std::vector<int64_t> dims,
                    Opcode opcode, const std::vector<LoweredValue>& operands,
                    const SetAttributes& set = {});
  // The same for an instruction whose operands and attributes decide its shape: the verifier's
  // shape inference gives it (builder.h), never the lowering. A failure's value has no shape.
  LoweredValue Infer(const std::string& step, Opcode opcode,
                     const std::vector<LoweredValue>& operands, const SetAttributes& set = {});
  // What Emit and Infer share: `shape` is the declared one, or unset (kInvalid) to infer.
  LoweredValue Append(const std::string& step, Shape shape, Opcode opcode,
                      const std::vector<LoweredValue>& operands, const SetAttributes& set);

  // Building blocks, as jax.lax emits them.
  LoweredValue Splat(PrimitiveType type, double v, const std::vector<int64_t>& dims);
  LoweredValue BroadcastInDim(const LoweredValue& x, const std::vector<int64_t>& dims,
                              const std::vector<int64_t>& mapping);
  LoweredValue NumpyBroadcast(const LoweredValue& x, const std::vector<int64_t>& dims);
  LoweredValue Convert(const LoweredValue& x, PrimitiveType type);
  LoweredValue Map(Opcode opcode, const LoweredValue& x);
  LoweredValue Map(Opcode opcode, const LoweredValue& a, const LoweredValue& b);
  LoweredValue Compare(Direction direction, const LoweredValue& a, const LoweredValue& b);
  LoweredValue Select(const LoweredValue& pred, const LoweredValue& a, const LoweredValue& b);
  LoweredValue Reshape(const LoweredValue& x, const std::vector<int64_t>& dims);
  LoweredValue Transpose(const LoweredValue& x, const std::vector<int64_t>& perm);
  // reduce over `axes` with add (init 0) or maximum (init -inf).
  LoweredValue Reduce(const LoweredValue& x, const std::vector<int64_t>& axes, bool max);
  // x broadcast back along `axis` to `dims` (the shape x was reduced from).
  LoweredValue Unreduce(const LoweredValue& x, const std::vector<int64_t>& dims, int64_t axis);

  // One per op kind (or family).
  LoweredValue LowerOp(const Op& op, const std::vector<LoweredValue>& in);
  LoweredValue LowerDot(const Op& op, const LoweredValue& l, const LoweredValue& r);
  LoweredValue LowerConv(const Op& op, const LoweredValue& x, const LoweredValue& f);
  LoweredValue LowerConvBackpropInput(const Op& op, const LoweredValue& f, const LoweredValue& dy);
  LoweredValue LowerConvBackpropFilter(const Op& op, const LoweredValue& x, const LoweredValue& dy);
  // tanh(c·(v + a·v·v·v)) of an f32 v: the part gelu and its gradient share, in their order.
  LoweredValue GeluTanh(const LoweredValue& v);
  LoweredValue LowerGelu(const LoweredValue& x);
  LoweredValue LowerGeluGrad(const LoweredValue& x, const LoweredValue& dy);
  LoweredValue LowerSoftmax(const Op& op, const LoweredValue& x);
  LoweredValue LowerReduce(const Op& op, const LoweredValue& x);
  LoweredValue LowerBroadcast(const Op& op, const LoweredValue& x);
  LoweredValue LowerCrossEntropy(const Op& op, const LoweredValue& logits,
                                 const LoweredValue& labels);

  const std::string graph_name_;
  ModuleBuilder builder_;
  Status status_;  // the first failed Emit
  std::set<std::string> used_names_;
  // Per op: one broadcast constant per type, value and dims.
  std::map<std::tuple<PrimitiveType, double, std::vector<int64_t>>, LoweredValue> splats_;
  std::string current_;  // the op being lowered: name and metadata
  std::string current_op_name_;
  int next_parameter_ = 0;
};

}  // namespace tpuemu::engine::hlo::op_lowering_internal
