#include "bench/workloads/replica_step.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <map>
#include <memory>
#include <string>

#include "engine/frontend/from_graph.h"
#include "engine/hlo/evaluator.h"
#include "engine/runtime/parallel.h"

namespace tpuemu::bench {
namespace {

constexpr float kLearningRate = 0.01f;

bool IsData(const std::string& id) { return id == "x" || id == "labels"; }

// The arguments of one replica's module: its own data, the shared weights.
struct Replica {
  std::vector<engine::hlo::Value> args;
  Result<engine::hlo::EvalResult> result = Status::Internal("not run");
};

}  // namespace

Result<ReplicaTiming> MeasureReplicaStep(const StepGraphBuilder& build, int64_t batch, int replicas,
                                         engine::Pool& pool, int steps) {
  if (replicas < 1 || batch % replicas != 0) {
    return Status::InvalidArgument("batch " + std::to_string(batch) + " does not split into " +
                                   std::to_string(replicas) + " replicas");
  }
  std::vector<StepGraph> graphs;
  for (int r = 0; r < replicas; ++r) {
    std::mt19937_64 rng(7 + static_cast<uint64_t>(r));
    graphs.push_back(build(batch / replicas, rng));
    TPUEMU_RETURN_IF_ERROR(graphs.back().graph.status());
  }
  Result<engine::hlo::GraphLowering> lowering = engine::hlo::LowerGraph(graphs[0].graph);
  if (!lowering.ok()) return lowering.status();
  // Weights once, shared by every replica; the update writes them in place.
  std::map<std::string, std::shared_ptr<engine::hlo::Array>> weights;
  std::vector<Replica> runs(static_cast<size_t>(replicas));
  for (const std::string& id : lowering->parameters) {
    for (int r = 0; r < replicas; ++r) {
      const StepGraph& g = graphs[static_cast<size_t>(r)];
      if (!IsData(id) && r > 0) {
        runs[static_cast<size_t>(r)].args.push_back(runs[0].args.back());
        continue;
      }
      Result<engine::hlo::Value> arg = ArgumentFor(g, id);
      if (!arg.ok()) return arg.status();
      // Made non-const behind the pointer to const (array.h): the update may write a weight.
      if (!IsData(id)) weights[id] = std::const_pointer_cast<engine::hlo::Array>(arg->array);
      runs[static_cast<size_t>(r)].args.push_back(std::move(*arg));
    }
  }
  // Each gradient's position in the result tuple, beside the weight it updates.
  std::vector<std::pair<engine::hlo::Array*, size_t>> updates;
  for (const auto& [weight, grad] : graphs[0].grads) {
    const auto at = std::find(lowering->outputs.begin(), lowering->outputs.end(), grad);
    if (at == lowering->outputs.end() || !weights.count(weight)) {
      return Status::InvalidArgument("no gradient output " + grad + " for weight " + weight);
    }
    updates.push_back(
        {weights.at(weight).get(), static_cast<size_t>(at - lowering->outputs.begin())});
  }
  engine::hlo::EvalOptions options;  // one thread per replica: the replicas are the parallelism
  options.profile = true;
  engine::ParallelContext update_threads;
  update_threads.pool = replicas > 1 ? &pool : nullptr;
  update_threads.group = "update";
  update_threads.max_threads = replicas;
  const engine::hlo::Module& module = lowering->module;
  const size_t instructions = module.entry_computation().instructions.size();

  ReplicaTiming timing;
  timing.part_ns.assign(instructions + 1, std::numeric_limits<int64_t>::max());
  timing.part_names = InstructionLabels(module);
  timing.part_names.push_back("the update");
  for (int s = -1; s < steps; ++s) {
    int64_t update_ns = 0;
    const Timing t = Measure([&] {
      auto run = [&](int64_t r) {
        Replica& replica = runs[static_cast<size_t>(r)];
        replica.result = engine::hlo::Evaluate(module, {replica.args}, options);
      };
      if (replicas > 1) {
        pool.ParallelFor("replicas", replicas, run, replicas);
      } else {
        run(0);
      }
      const auto u0 = std::chrono::steady_clock::now();
      const float scale = kLearningRate / static_cast<float>(replicas);
      std::vector<const float*> grads(runs.size());
      for (const auto& [weight, output] : updates) {
        for (size_t r = 0; r < runs.size(); ++r) {
          if (!runs[r].result.ok()) return;
          grads[r] = runs[r].result->outputs[0].elements[output].array->f.data();
        }
        float* w = weight->f.data();
        // ApplySgd's loop: each replica's gradient subtracted in replica order.
        engine::ParallelChunks(update_threads, static_cast<int64_t>(weight->f.size()),
                               engine::kElementwiseGrain, [&](int64_t begin, int64_t end) {
                                 for (const float* g : grads) {
                                   for (int64_t k = begin; k < end; ++k) w[k] -= scale * g[k];
                                 }
                               });
      }
      update_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now() - u0)
                      .count();
    });
    for (const Replica& replica : runs) {
      if (!replica.result.ok()) return replica.result.status();
    }
    if (s < 0) continue;  // the warm-up
    timing.best = s == 0 ? t : Min(timing.best, t);
    for (size_t i = 0; i < instructions; ++i) {
      int64_t slowest = 0;
      for (const Replica& replica : runs) {
        slowest = std::max(slowest, replica.result->host_ns[static_cast<size_t>(module.entry)][i]);
      }
      timing.part_ns[i] = std::min(timing.part_ns[i], slowest);
    }
    timing.part_ns[instructions] = std::min(timing.part_ns[instructions], update_ns);
  }
  return timing;
}

}  // namespace tpuemu::bench
