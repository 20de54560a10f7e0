#include "engine/frontend/graph_program.h"

#include <optional>

#include "engine/frontend/init_cache.h"
#include "engine/hlo/evaluator.h"

namespace tpuemu::engine::hlo {
namespace {

// Copies run in chunks on the job's threads and stop with it: a 4096-wide MLP copies 256 MiB of
// weights in (from_graph.h's ArgumentOf) and as much gradient out each step, hundreds of
// milliseconds on first touch.
constexpr int64_t kCopyGrain = int64_t{1} << 18;

// A lowered output as the tensor of the op's dtype (the same values: an f32/bf16 array holds
// what the tensor holds, an s32 array the int32s); nullopt when the token stopped the copy.
std::optional<Tensor> TensorOn(const Array& a, DType dtype, const ParallelContext& parallel) {
  Tensor t = Tensor::Uninitialized(dtype, engine::Shape(a.dims));
  const bool done =
      ParallelChunks(parallel, t.num_elements(), kCopyGrain, [&](int64_t begin, int64_t end) {
        if (dtype == DType::kI32) {
          for (int64_t k = begin; k < end; ++k) {
            t.i32()[k] = static_cast<int32_t>(a.i[static_cast<size_t>(k)]);
          }
        } else {
          std::copy(a.f.begin() + begin, a.f.begin() + end, t.f32() + begin);
        }
      });
  if (!done) return std::nullopt;
  return t;
}

}  // namespace

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
  const Value& root = run->outputs[0];
  std::map<std::string, Tensor> outputs;
  for (size_t k = 0; k < lowering_.outputs.size(); ++k) {
    const std::string& id = lowering_.outputs[k];
    std::optional<Tensor> out = TensorOn(*root.elements[k].array, graph.Find(id)->dtype, parallel);
    if (!out) return parallel.cancel.Check("while copying out '" + id + "'");
    outputs.emplace(id, std::move(*out));
  }
  return outputs;
}

}  // namespace tpuemu::engine::hlo
