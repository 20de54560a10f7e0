// Internals of LowerGraph (engine/hlo/from_graph.h), shared by from_graph.cpp (the emitter, the
// per-kind dispatch and the module text) and from_graph_ops.cpp (the composite ops: dot, the
// convolutions, gelu, softmax, reduce, broadcast, cross-entropy). Not for other callers.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "engine/hlo/from_graph.h"

namespace tpuemu::engine::hlo::from_graph_internal {

// "f32", "bf16", "s32".
std::string HloType(DType dtype);
// "1,2,3" (or with another separator: "3x3").
std::string JoinInts(const std::vector<int64_t>& v, const char* sep = ",");

struct LoweredValue {
  int index = -1;  // into the entry's instructions
  std::string type;
  std::vector<int64_t> dims;
};

struct LoweredInstruction {
  std::string name;
  std::string shape;
  std::string opcode;
  std::vector<int> operands;  // indices of earlier instructions
  std::string literal;        // parameter(N), constant(V) and iota() have no operands
  std::string attrs;          // ", dimensions={1}" ...
  std::string op_name;        // metadata; empty for none
};

// One lowering of one graph: construct, call Run once. Instructions are kept as a list and named
// when printed, so an op's last instruction can take the op's own name after its helpers.
class GraphLowerer {
 public:
  explicit GraphLowerer(const Graph& graph) : graph_(graph) {}

  Result<GraphLowering> Run();

 private:
  // Appends an instruction named "<op>.<step>" and returns its value.
  LoweredValue Emit(const std::string& step, const std::string& type, std::vector<int64_t> dims,
                    const std::string& opcode, const std::vector<LoweredValue>& operands,
                    std::string attrs = "", std::string literal = "");
  std::string Unique(const std::string& name);

  // Building blocks, as jax.lax emits them.
  LoweredValue Splat(const std::string& type, double v, const std::vector<int64_t>& dims);
  LoweredValue BroadcastInDim(const LoweredValue& x, const std::vector<int64_t>& dims,
                              const std::vector<int64_t>& mapping);
  LoweredValue NumpyBroadcast(const LoweredValue& x, const std::vector<int64_t>& dims);
  LoweredValue Convert(const LoweredValue& x, const std::string& type);
  LoweredValue Map(const std::string& opcode, const LoweredValue& x);
  LoweredValue Map(const std::string& opcode, const LoweredValue& a, const LoweredValue& b);
  LoweredValue Reshape(const LoweredValue& x, const std::vector<int64_t>& dims);
  LoweredValue Transpose(const LoweredValue& x, const std::vector<int64_t>& perm);
  // reduce over `axes` with add (init 0) or maximum (init -inf).
  LoweredValue Reduce(const LoweredValue& x, const std::vector<int64_t>& axes, bool max);
  // x broadcast back along `axis` to `dims` (the shape x was reduced from).
  LoweredValue Unreduce(const LoweredValue& x, const std::vector<int64_t>& dims, int64_t axis);
  std::string Reducer(bool max, const std::string& type);

  // One per op kind (or family).
  Result<LoweredValue> LowerOp(const Op& op, const std::vector<LoweredValue>& in);
  LoweredValue LowerDot(const Op& op, const LoweredValue& l, const LoweredValue& r);
  LoweredValue LowerConv(const Op& op, const LoweredValue& x, const LoweredValue& f);
  LoweredValue LowerConvBackpropInput(const Op& op, const LoweredValue& f, const LoweredValue& dy);
  LoweredValue LowerConvBackpropFilter(const Op& op, const LoweredValue& x, const LoweredValue& dy);
  LoweredValue LowerGelu(const LoweredValue& x);
  LoweredValue LowerGeluGrad(const LoweredValue& x, const LoweredValue& dy);
  LoweredValue LowerSoftmax(const Op& op, const LoweredValue& x);
  LoweredValue LowerReduce(const Op& op, const LoweredValue& x);
  LoweredValue LowerBroadcast(const Op& op, const LoweredValue& x);
  LoweredValue LowerCrossEntropy(const Op& op, const LoweredValue& logits,
                                 const LoweredValue& labels);

  const Graph& graph_;
  std::vector<LoweredInstruction> entry_;
  std::set<std::string> used_names_;
  std::map<std::string, std::string> reducers_;  // computation name -> text
  std::map<std::string, LoweredValue> splats_;   // per op: one broadcast constant per value
  std::string current_;                          // the op being lowered: name and metadata
  std::string current_op_name_;
  int next_parameter_ = 0;
};

}  // namespace tpuemu::engine::hlo::from_graph_internal
