// Workloads: the engine graphs a job runs, built with the ir.h builder from a JobSpec.
//
//  * matmul: parameters a [m,k] and b [k,n] (random, from the seed), output c = a·b.
//  * mlp: a training step of `layers` ReLU layers of width `hidden` on 16 features, 4 classes, on
//    a fixed synthetic batch whose labels come from a fixed random teacher network (so there is
//    something to learn). Outputs the loss and one gradient per weight; the weights are
//    parameters, and ApplySgd updates the fed values between steps, so the loss falls.
//  * cnn: conv2d 3x3 SAME on 8x8x2 images, ReLU, dense to 4 classes, softmax loss; backward with
//    conv2d_backprop_filter; trained by SGD like mlp.
//  * transformer: `layers` pre-residual blocks on [batch, seqLen, dModel] inputs — Q/K/V
//    projections, per-head attention (batched dots for scores and context, scale, softmax),
//    output projection, residual, a dModel -> 4·dModel -> dModel GELU MLP, residual — then a
//    head to 4 classes per token and the softmax loss. Labels come from a fixed random teacher
//    on each token plus its sequence mean (so attention has something to learn). The backward
//    pass is written out with the IR's ops (workload_transformer.cpp); trained by SGD like mlp.
//  * program: the client's IR, run as is every step: the graph ParseJobSpec built (shared, not
//    copied or parsed again).
// `shard_batch` is the per-core batch (data parallel over `cores`): the graph is built for one
// shard and Feeds(shard) gives each shard its slice of the data. Not thread-safe; one per job.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "base/status.h"
#include "engine/frontend/ir.h"
#include "engine/runtime/cancel.h"
#include "engine/runtime/execute_options.h"
#include "engine/runtime/parallel.h"
#include "engine/runtime/tensor.h"
#include "service/jobs/job_spec.h"

namespace tpuemu::service {

class Workload {
 public:
  // INVALID_ARGUMENT naming the op if the graph does not build, or for a program spec without
  // its graph (a spec not made by ParseJobSpec).
  // CANCELLED when *cancel is set while it generates the values (a job's cancel, timeout or
  // shutdown: generating a large workload's values takes seconds).
  static Result<Workload> Build(const JobSpec& spec, const std::atomic<bool>* cancel = nullptr);
  // The same graph without generating any value (Feeds are empty, GradientBytes 0): cheap
  // whatever the sizes, for planning a job at submit (its host memory) before it runs.
  static Result<Workload> BuildGraphOnly(const JobSpec& spec);

  const engine::Graph& graph() const { return program_ ? *program_ : graph_; }
  int shards() const { return shards_; }
  // The parameter values for shard `shard` (weights + its slice of the data), copied.
  std::map<std::string, engine::Tensor> Feeds(int shard) const;
  // The same without a copy (a large model's weights take 100s of ms to copy): pointers into
  // this workload, valid until the next ApplySgd; several shards' views may be read at once.
  engine::FeedView FeedView(int shard) const;
  // The loss output id, if the workload trains.
  const std::optional<std::string>& loss_id() const { return loss_id_; }
  // Bytes of gradients all-reduced per step in data-parallel training (0 if none).
  double GradientBytes() const;
  // The one host-side step of a job (docs/architecture.md, the walk of a job): the weight update
  // is not part of the step's HLO module; it runs here, on the host's copy of the weights, which
  // the next step feeds in. Why outside: the module is one data-parallel shard's step, and the
  // update needs the gradients of every shard averaged (the all-reduce, done here between the
  // shards' modules); the module a job's `…/hlo` returns is that step, loss and gradients out.
  // SGD on the weights with the gradients averaged over the shards' results, each weight's
  // elements cut into chunks run on `parallel`'s share of the pool (the step's own cores: a large
  // model's update is a serial tail otherwise). Every element subtracts the shards' gradients in
  // shard order, so the result does not depend on the threads. Polls the cancel token between
  // chunks: false when it stopped (the weights are then partly updated).
  bool ApplySgd(const std::vector<std::map<std::string, engine::Tensor>>& shard_outputs,
                const engine::ParallelContext& parallel = {});
  // The same update for a caller that keeps the weights elsewhere (StepRunner keeps them in the
  // evaluator's arrays across steps): each (weight id, gradient output id) it trains, and one
  // weight's `n` elements updated from the shards' gradients, ApplySgd's arithmetic in its order.
  const std::vector<std::pair<std::string, std::string>>& gradients() const { return grads_; }
  bool IsWeight(const std::string& id) const { return weights_.count(id) > 0; }
  bool SgdUpdate(float* weight, int64_t n, const std::vector<const float*>& shard_grads,
                 const engine::ParallelContext& parallel) const;

 private:
  static Result<Workload> Build(const JobSpec& spec, bool values, const std::atomic<bool>* cancel);
  static void BuildCnn(const JobSpec& spec, std::mt19937_64& rng, Workload& w);
  static void BuildTransformer(const JobSpec& spec, std::mt19937_64& rng, Workload& w);

  engine::Graph graph_;                           // a built-in workload's graph
  std::shared_ptr<const engine::Graph> program_;  // a program job's graph, or null
  int shards_ = 1;
  // Whether Build still generates values: not for BuildGraphOnly, nor once *cancel_ is set (each
  // tensor left would cost its allocation and copy, ~50 ms per 16.7 M elements).
  bool Generating() const {
    return values_ && (cancel_ == nullptr || !cancel_->load(std::memory_order_relaxed));
  }

  bool values_ = true;                             // false: the graph only (BuildGraphOnly)
  const std::atomic<bool>* cancel_ = nullptr;      // while Build generates the values
  std::map<std::string, engine::Tensor> weights_;  // parameter id -> value (trained)
  std::vector<std::pair<std::string, std::string>> grads_;   // weight id, gradient output id
  std::vector<std::map<std::string, engine::Tensor>> data_;  // per shard: data parameters
  std::optional<std::string> loss_id_;
  float learning_rate_ = 0;
};

}  // namespace tpuemu::service
