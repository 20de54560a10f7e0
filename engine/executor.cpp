#include "engine/executor.h"

#include <chrono>

#include "engine/kernels.h"

namespace tpuemu::engine {
namespace {

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

Status CheckFeeds(const Graph& graph, const std::map<std::string, Tensor>& feeds) {
  for (const auto& [id, tensor] : feeds) {
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

}  // namespace

Result<ExecutionResult> Execute(const CompiledProgram& program, const Graph& graph,
                                const std::map<std::string, Tensor>& feeds,
                                const ExecuteOptions& options) {
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
  std::vector<const Tensor*> value(n, nullptr);
  KernelContext ctx;
  ctx.precision = program.options.precision;
  ctx.parallel.pool = options.pool;
  ctx.parallel.group = options.pool_group;
  ctx.parallel.max_threads = options.max_threads;
  ctx.parallel.cancel = {options.cancel, options.deadline};

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
        value[i] = &it->second;
      } else if (op.attrs.init.kind != Init::Kind::kNone) {
        owned[i] = Tensor(op.dtype, op.shape);
        TPUEMU_RETURN_IF_ERROR(MaterializeInit(op.attrs.init, owned[i]));
        value[i] = &owned[i];
      } else {
        return Status::InvalidArgument("parameter '" + op.id + "' was not fed");
      }
    } else if (op.kind == OpKind::kConstant) {
      owned[i] = Tensor(op.dtype, op.shape);
      TPUEMU_RETURN_IF_ERROR(MaterializeInit(op.attrs.init, owned[i]));
      value[i] = &owned[i];
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
      inputs.clear();
      for (int in : op.input_index) inputs.push_back(value[static_cast<size_t>(in)]);
      owned[i] = Tensor(op.dtype, op.shape);
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

}  // namespace tpuemu::engine
