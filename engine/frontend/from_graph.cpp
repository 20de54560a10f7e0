// LowerGraph (from_graph.h): a graph's ops lowered in order (op_lowering_internal.h) into one
// module, its parameters and constants as the entry's parameters and its outputs as the ROOT
// tuple.
#include "engine/frontend/from_graph.h"

#include "engine/frontend/op_lowering_internal.h"
#include "engine/hlo/printer.h"

namespace tpuemu::engine::hlo {

using op_lowering_internal::LoweredValue;
using op_lowering_internal::OpLowerer;

Result<GraphLowering> LowerGraph(const Graph& graph) {
  if (!graph.status().ok()) {
    return Status::InvalidArgument("graph \"" + graph.name() +
                                   "\" has an error: " + graph.status().ToString());
  }
  OpLowerer lowerer(graph.name());
  GraphLowering out;
  const std::vector<Op>& ops = graph.ops();
  // Op ids keep their names even when a helper instruction was named first.
  std::vector<std::string> names;
  for (const Op& op : ops) names.push_back(lowerer.Unique(OpLowerer::Identifier(op.id)));
  std::vector<LoweredValue> values;
  for (size_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    std::vector<LoweredValue> in;
    for (int k : op.input_index) in.push_back(values[static_cast<size_t>(k)]);
    values.push_back(lowerer.LowerNamed(op, names[i], in));
    if (!lowerer.status().ok()) return lowerer.status();
    if (op.kind == OpKind::kParameter || op.kind == OpKind::kConstant) {
      out.parameters.push_back(op.id);
    }
  }
  // The ROOT tuple, outside any op.
  std::vector<int> root;
  for (const std::string& id : graph.outputs()) {
    root.push_back(values[static_cast<size_t>(graph.IndexOf(id))].index);
    out.outputs.push_back(id);
  }
  Result<Module> module = lowerer.Finish(root, lowerer.Unique("tuple"));
  if (!module.ok()) return module.status();
  Result<std::string> text = PrintModule(*module);
  if (!text.ok()) return text.status();
  out.text = std::move(*text);
  out.module = std::move(*module);
  return out;
}

}  // namespace tpuemu::engine::hlo
