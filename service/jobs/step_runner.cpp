#include "service/jobs/step_runner.h"

#include <algorithm>
#include <chrono>
#include <utility>
#include <vector>

#include "engine/chip/chip_model.h"
#include "engine/frontend/graph_program.h"
#include "engine/frontend/init_cache.h"
#include "engine/hlo/evaluator.h"

namespace tpuemu::service {

using engine::hlo::Array;
using engine::hlo::Value;

struct StepRunner::Resident {
  std::vector<std::vector<Value>> args;  // per shard, the entry's parameters in order
  // Per trained weight (Workload::gradients' order): its array, which every shard's args hold,
  // and the index of its gradient in the entry's result.
  std::vector<std::pair<Array*, size_t>> weights;
  std::optional<size_t> loss;  // the loss's index in the entry's result
  Value last_root;             // shard 0's result of the last step that ran
};

StepRunner::~StepRunner() = default;

Result<std::unique_ptr<StepRunner>> StepRunner::Create(const engine::CompiledProgram& program,
                                                       Workload& workload,
                                                       const engine::Slice& slice, int tensorcores,
                                                       engine::ExecuteOptions exec) {
  if (program.lowered == nullptr) {
    return Status::Internal("program '" + program.name + "' has no lowered module");
  }
  return std::unique_ptr<StepRunner>(
      new StepRunner(program, workload, slice, tensorcores, std::move(exec)));
}

StepRunner::StepRunner(const engine::CompiledProgram& program, Workload& workload,
                       const engine::Slice& slice, int tensorcores, engine::ExecuteOptions exec)
    : program_(program),
      workload_(workload),
      tensorcores_(tensorcores),
      exec_(std::move(exec)),
      parallel_(engine::ParallelContextOf(exec_)),
      clock_hz_(slice.spec().clock_hz),
      peak_flops_per_tensorcore_cycle_(slice.spec().PeakBf16FlopsPerTensorCore() / clock_hz_),
      allreduce_cycles_(workload.shards() > 1 ? engine::TensorCoreCollectiveCycles(
                                                    slice.type(), engine::Collective::kAllReduce,
                                                    workload.shards(), workload.GradientBytes())
                                              : 0) {}

Status StepRunner::MakeResident() {
  const engine::hlo::GraphLowering& lowering = program_.lowered->lowering();
  const engine::Graph& graph = workload_.graph();
  auto resident = std::make_unique<Resident>();
  // Weights and constants: one array for every shard (none of them writes its arguments: the
  // evaluator takes an argument's buffer only when nobody else holds it, and Run's copy of the
  // args holds a second reference).
  std::map<std::string, Value> shared;
  for (int shard = 0; shard < workload_.shards(); ++shard) {
    const engine::FeedView feeds = workload_.FeedView(shard);
    std::vector<Value> args;
    for (const std::string& id : lowering.parameters) {
      if (auto it = shared.find(id); it != shared.end()) {
        args.push_back(it->second);
        continue;
      }
      const engine::Op* op = graph.Find(id);
      if (op == nullptr) {
        return Status::InvalidArgument("the graph has no op '" + id + "' that its lowering takes");
      }
      const auto fed = feeds.find(id);
      const bool is_fed = op->kind == engine::OpKind::kParameter && fed != feeds.end();
      std::optional<Value> value;
      if (is_fed) {
        value = engine::hlo::ArgumentOf(*fed->second, parallel_);
      } else {
        if (op->kind == engine::OpKind::kParameter &&
            op->attrs.init.kind == engine::Init::Kind::kNone) {
          return Status::InvalidArgument("parameter '" + id + "' was not fed");
        }
        // A constant, or an unfed parameter with an init spec: its values, as the executor makes
        // them.
        auto init =
            engine::InitCache::Global().Get(op->dtype, op->shape, op->attrs.init, parallel_.cancel);
        if (!init.ok()) {
          TPUEMU_RETURN_IF_ERROR(parallel_.cancel.Check("before op '" + id + "'"));
          return init.status();
        }
        value = engine::hlo::ArgumentOf(**init, parallel_);
      }
      if (!value) return parallel_.cancel.Check("while copying in '" + id + "'");
      if (!is_fed || workload_.IsWeight(id)) shared.emplace(id, *value);
      args.push_back(std::move(*value));
    }
    resident->args.push_back(std::move(args));
  }
  auto output_index = [&](const std::string& id) -> std::optional<size_t> {
    for (size_t k = 0; k < lowering.outputs.size(); ++k) {
      if (lowering.outputs[k] == id) return k;
    }
    return std::nullopt;
  };
  for (const auto& [wid, gid] : workload_.gradients()) {
    const auto it = shared.find(wid);
    const std::optional<size_t> grad = output_index(gid);
    if (it == shared.end() || it->second.is_tuple || !it->second.array->floating() || !grad) {
      return Status::Internal("weight '" + wid + "' or its gradient '" + gid +
                              "' is not in the step's module");
    }
    // Value::Of made the array non-const behind its pointer to const; the update writes it
    // between two steps, while no evaluation reads it.
    resident->weights.push_back({const_cast<Array*>(it->second.array.get()), *grad});
  }
  if (workload_.loss_id()) {
    resident->loss = output_index(*workload_.loss_id());
    if (!resident->loss) return Status::Internal("the loss is not in the step's module");
  }
  resident_ = std::move(resident);
  return Status::Ok();
}

Result<db::JobStepRow> StepRunner::Run(int64_t step) {
  const auto t0 = std::chrono::steady_clock::now();
  if (resident_ == nullptr) TPUEMU_RETURN_IF_ERROR(MakeResident());
  // The data-parallel shards run at once, as replicas do: up to `threads` of them side by side,
  // each on an equal share of the job's threads (one each when shards = threads, the usual case:
  // a job's cores are both its shards and its threads). Small per-shard ops then need no split,
  // and the shards share the read-only weights' arrays.
  const int shards = workload_.shards();
  const int threads = parallel_.Threads();
  const int side_by_side = std::max(1, std::min(shards, threads));
  engine::ExecuteOptions per_shard = exec_;
  per_shard.max_threads = std::max(1, threads / side_by_side);
  engine::hlo::EvalOptions eval = engine::hlo::EvalOptions::On(ParallelContextOf(per_shard));
  eval.precision = program_.options.precision;
  std::vector<Result<Value>> runs(static_cast<size_t>(shards),
                                  Status::Internal("shard did not run"));
  auto run_shard = [&](int64_t shard) {
    // A copy of the shard's args: a second reference to each array, so none is overwritten.
    Result<engine::hlo::EvalResult> r = engine::hlo::Evaluate(
        program_.lowered->module(), {resident_->args[static_cast<size_t>(shard)]}, eval);
    if (r.ok()) {
      runs[static_cast<size_t>(shard)] = std::move(r->outputs[0]);
    } else {
      runs[static_cast<size_t>(shard)] = r.status();
    }
  };
  if (side_by_side > 1) {
    exec_.pool->ParallelFor(exec_.pool_group, shards, run_shard, side_by_side);
  } else {
    for (int shard = 0; shard < shards; ++shard) run_shard(shard);
  }
  std::vector<Value> results;
  for (auto& r : runs) {
    if (!r.ok()) return r.status();  // the first shard's error, in shard order
    results.push_back(std::move(r).value());
  }
  // A stop after the last shard's run skips the update (a large model's takes a while).
  std::vector<const float*> grads(results.size());
  for (const auto& [weight, grad] : resident_->weights) {
    for (size_t s = 0; s < results.size(); ++s)
      grads[s] = results[s].elements[grad].array->f.data();
    if (!workload_.SgdUpdate(weight->f.data(), weight->size(), grads, parallel_)) {
      return parallel_.cancel.Check("in the SGD update");
    }
  }
  db::JobStepRow m;
  m.step = step;
  m.cycles = program_.totals.cycles + allreduce_cycles_;
  m.emulated_seconds = static_cast<double>(m.cycles) / clock_hz_;
  m.flops = program_.totals.flops * static_cast<double>(results.size());
  m.mxu_utilization = m.cycles > 0 ? m.flops / (static_cast<double>(m.cycles) * tensorcores_ *
                                                peak_flops_per_tensorcore_cycle_)
                                   : 0;
  if (resident_->loss) {
    double loss = 0;
    for (const Value& outputs : results) loss += outputs.elements[*resident_->loss].array->f[0];
    m.loss = loss / static_cast<double>(results.size());
  }
  m.host_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  resident_->last_root = std::move(results[0]);
  last_outputs_copied_ = false;
  return m;
}

const std::map<std::string, engine::Tensor>& StepRunner::last_outputs() const {
  if (last_outputs_copied_) return last_outputs_;
  last_outputs_copied_ = true;
  last_outputs_.clear();
  const engine::hlo::GraphLowering& lowering = program_.lowered->lowering();
  for (size_t k = 0; k < lowering.outputs.size(); ++k) {
    const std::string& id = lowering.outputs[k];
    const Array& a = *resident_->last_root.elements[k].array;
    const engine::DType dtype = workload_.graph().Find(id)->dtype;
    engine::Tensor t = engine::Tensor::Uninitialized(dtype, engine::Shape(a.dims));
    if (dtype == engine::DType::kI32) {
      for (int64_t i = 0; i < t.num_elements(); ++i) {
        t.i32()[i] = static_cast<int32_t>(a.i[static_cast<size_t>(i)]);
      }
    } else {
      std::copy(a.f.begin(), a.f.end(), t.f32());
    }
    last_outputs_.emplace(id, std::move(t));
  }
  return last_outputs_;
}

}  // namespace tpuemu::service
