#include "tests/engine/reference/executor.h"

#include <chrono>

#include "engine/frontend/init_cache.h"
#include "tests/engine/reference/kernels.h"

namespace tpuemu::engine::reference {
namespace {

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

Status CheckFeeds(const Graph& graph, const FeedView& feeds) {
  for (const auto& [id, fed] : feeds) {
    const Tensor& tensor = *fed;
    const Op* op = graph.Find(id);
    if (op == nullptr || op->kind != OpKind::kParameter) {
      return Status::InvalidArgument("feed '" + id + "' does not name a parameter");
    }
    if (tensor.dtype() != op->dtype || tensor.shape() != op->shape) {
      return Status::InvalidArgument("parameter '" + id + "' expects " +
                                     ShapeString(op->dtype, op->shape) + ", got " +
                                     ShapeString(tensor.dtype(), tensor.shape()));
    }
  }
  return Status::Ok();
}

// Kernels of these kinds read element i of every input before writing element i of the output
// (softmax: per row), so the output may take over the buffer of an input that dies at this op.
bool CanRunInPlace(OpKind kind) {
  return IsElementwiseBinary(kind) || IsElementwiseUnary(kind) || kind == OpKind::kReluGrad ||
         kind == OpKind::kGeluGrad || kind == OpKind::kSoftmax;
}

}  // namespace

Result<ExecutionResult> Execute(const CompiledProgram& program, const Graph& graph,
                                const std::map<std::string, Tensor>& feeds,
                                const ExecuteOptions& options) {
  FeedView view;
  for (const auto& [id, tensor] : feeds) view.emplace(id, &tensor);
  return ExecuteBorrowed(program, graph, view, options);
}

Result<ExecutionResult> ExecuteBorrowed(const CompiledProgram& program, const Graph& graph,
                                        const FeedView& feeds, const ExecuteOptions& options) {
  const int64_t start_ns = NowNs();
  TPUEMU_RETURN_IF_ERROR(graph.status());
  if (graph.ops().size() != program.plans.size() || StructureKey(graph) != program.structure_key) {
    return Status::InvalidArgument("graph '" + graph.name() +
                                   "' does not have the structure of compiled program '" +
                                   program.name + "'");
  }
  TPUEMU_RETURN_IF_ERROR(CheckFeeds(graph, feeds));

  const auto& ops = graph.ops();
  const size_t n = ops.size();
  std::vector<Tensor> owned(n);
  std::vector<std::shared_ptr<const Tensor>> cached(n);  // random inits from InitCache
  std::vector<const Tensor*> value(n, nullptr);
  KernelContext ctx;
  ctx.precision = program.options.precision;
  ctx.parallel = ParallelContextOf(options);

  ExecutionResult result;
  result.ops.reserve(n);
  std::vector<const Tensor*> inputs;
  for (size_t i = 0; i < n; ++i) {
    const Op& op = ops[i];
    const OpPlan& plan = program.plans[i];
    if (ctx.parallel.cancel.Stopped()) {
      TPUEMU_RETURN_IF_ERROR(ctx.parallel.cancel.Check("before op '" + op.id + "'"));
    }
    const int64_t op_start = NowNs();
    if (op.kind == OpKind::kParameter) {
      auto it = feeds.find(op.id);
      if (it != feeds.end()) {
        value[i] = it->second;
      } else if (op.attrs.init.kind != Init::Kind::kNone) {
        auto init = InitCache::Global().Get(op.dtype, op.shape, op.attrs.init, ctx.parallel.cancel);
        if (!init.ok()) return ctx.parallel.cancel.Stopped() ? StoppedIn(op, ctx) : init.status();
        cached[i] = std::move(init).value();
        value[i] = cached[i].get();
      } else {
        return Status::InvalidArgument("parameter '" + op.id + "' was not fed");
      }
    } else if (op.kind == OpKind::kConstant) {
      auto init = InitCache::Global().Get(op.dtype, op.shape, op.attrs.init, ctx.parallel.cancel);
      if (!init.ok()) return ctx.parallel.cancel.Stopped() ? StoppedIn(op, ctx) : init.status();
      cached[i] = std::move(init).value();
      value[i] = cached[i].get();
    } else if (op.kind == OpKind::kReshape) {
      const size_t in = static_cast<size_t>(op.input_index[0]);
      // A reshape is a bitcast: steal the buffer when this was its last reader.
      if (value[in] == &owned[in] && program.plans[in].last_use == static_cast<int>(i)) {
        owned[i] = std::move(owned[in]);
        value[in] = nullptr;
      } else {
        owned[i] = *value[in];
      }
      owned[i].Reshape(op.shape);
      value[i] = &owned[i];
    } else {
      // The output takes over a dying input's buffer where the kernel allows it, else a recycled
      // one (BufferCache); kernels overwrite every element, so neither is zeroed first.
      int reuse = -1;
      if (CanRunInPlace(op.kind)) {
        for (int in : op.input_index) {
          const size_t u = static_cast<size_t>(in);
          if (value[u] == &owned[u] && program.plans[u].last_use == static_cast<int>(i) &&
              owned[u].dtype() == op.dtype && owned[u].shape() == op.shape) {
            reuse = in;
            break;
          }
        }
      }
      owned[i] = reuse >= 0 ? std::move(owned[static_cast<size_t>(reuse)])
                            : Tensor::Uninitialized(op.dtype, op.shape);
      inputs.clear();
      for (int in : op.input_index) {
        inputs.push_back(in == reuse ? &owned[i] : value[static_cast<size_t>(in)]);
      }
      TPUEMU_RETURN_IF_ERROR(RunKernel(op, inputs, owned[i], ctx));
      value[i] = &owned[i];
    }
    // Free what no later op reads (outputs and leaves have last_use == n).
    for (int in : op.input_index) {
      const size_t u = static_cast<size_t>(in);
      if (program.plans[u].last_use == static_cast<int>(i) && value[u] == &owned[u]) {
        owned[u] = Tensor();
        value[u] = nullptr;
      }
    }
    if (plan.last_use == static_cast<int>(i) && value[i] == &owned[i]) {  // dead result
      owned[i] = Tensor();
      value[i] = nullptr;
    }
    OpStats stats;
    stats.id = op.id;
    stats.kind = op.kind;
    stats.dtype = op.dtype;
    stats.shape = op.shape;
    stats.cycles = plan.cost.cycles;
    stats.seconds = plan.cost.seconds;
    stats.flops = plan.cost.flops;
    stats.hbm_bytes = plan.cost.hbm_bytes;
    stats.mxu_utilization = plan.cost.mxu_utilization;
    stats.host_ns = NowNs() - op_start;
    result.ops.push_back(std::move(stats));
  }
  for (const auto& id : graph.outputs()) {
    const size_t i = static_cast<size_t>(graph.IndexOf(id));
    if (value[i] == &owned[i]) {
      result.outputs[id] = std::move(owned[i]);
      value[i] = &result.outputs[id];
    } else {
      result.outputs[id] = *value[i];  // a fed parameter returned as an output
    }
  }
  result.totals = program.totals;
  result.peak_hbm_bytes_per_tensorcore = program.peak_hbm_bytes_per_tensorcore;
  result.host_ns = NowNs() - start_ns;
  return result;
}

}  // namespace tpuemu::engine::reference
