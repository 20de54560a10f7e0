#include "engine/frontend/graph_program.h"

#include <optional>

#include "engine/frontend/init_cache.h"
#include "engine/hlo/evaluator.h"

namespace tpuemu::engine::hlo {

Result<std::shared_ptr<const HloGraphProgram>> HloGraphProgram::Lower(const Graph& graph) {
  Result<GraphLowering> lowering = LowerGraph(graph);
  if (!lowering.ok()) return lowering.status();
  return std::shared_ptr<const HloGraphProgram>(new HloGraphProgram(std::move(*lowering)));
}

Result<std::map<std::string, Tensor>> HloGraphProgram::Run(const Graph& graph,
                                                           const FeedView& feeds,
                                                           Precision precision,
                                                           const ExecuteOptions& options) const {
  const ParallelContext parallel = ParallelContextOf(options);
  std::vector<Value> args;
  args.reserve(lowering_.parameters.size());
  for (const std::string& id : lowering_.parameters) {
    const Op* op = graph.Find(id);
    if (op == nullptr) {
      return Status::InvalidArgument("the graph has no op '" + id + "' that its lowering takes");
    }
    if (op->kind == OpKind::kParameter) {
      if (auto fed = feeds.find(id); fed != feeds.end()) {
        std::optional<Value> arg = ArgumentOf(*fed->second, parallel);
        if (!arg) return parallel.cancel.Check("while copying in '" + id + "'");
        args.push_back(std::move(*arg));
        continue;
      }
      if (op->attrs.init.kind == Init::Kind::kNone) {
        return Status::InvalidArgument("parameter '" + id + "' was not fed");
      }
    }
    // A constant, or an unfed parameter with an init spec: its values, as the executor makes them.
    auto init = InitCache::Global().Get(op->dtype, op->shape, op->attrs.init, parallel.cancel);
    if (!init.ok()) {
      TPUEMU_RETURN_IF_ERROR(parallel.cancel.Check("before op '" + id + "'"));
      return init.status();
    }
    std::optional<Value> arg = ArgumentOf(**init, parallel);
    if (!arg) return parallel.cancel.Check("while copying in '" + id + "'");
    args.push_back(std::move(*arg));
  }
  EvalOptions eval = EvalOptions::On(parallel);
  eval.precision = precision;
  Result<EvalResult> run = Evaluate(lowering_.module, {std::move(args)}, eval);
  if (!run.ok()) return run.status();
  // The result's arrays move out of it: a float output becomes its tensor without a copy
  // (tensor_bridge.h's TensorOf) once the run's result is the last to hold it.
  Value root = std::move(run->outputs[0]);
  run->outputs.clear();
  std::map<std::string, Tensor> outputs;
  for (size_t k = 0; k < lowering_.outputs.size(); ++k) {
    const std::string& id = lowering_.outputs[k];
    std::optional<Tensor> out =
        TensorOf(std::move(root.elements[k].array), graph.Find(id)->dtype, parallel);
    if (!out) return parallel.cancel.Check("while copying out '" + id + "'");
    outputs.emplace(id, std::move(*out));
  }
  return outputs;
}

}  // namespace tpuemu::engine::hlo
