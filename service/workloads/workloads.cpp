#include "service/workloads/workloads.h"

#include <cmath>
#include <random>
#include <utility>

#include "service/workloads/workload_data.h"

namespace tpuemu::service {
namespace {

using engine::DType;
using engine::Shape;
using engine::Tensor;

constexpr int64_t kFeatures = 16;
constexpr int64_t kClasses = 4;

using workload_data::Make;
using workload_data::Normal;
using workload_data::TeacherLabelled;

}  // namespace

// conv2d 3x3 SAME on 8x8x2 images -> ReLU -> flatten -> dense to kClasses -> softmax loss; the
// backward pass uses conv2d_backprop_filter for the filter gradient (both matmuls on the MXU).
void Workload::BuildCnn(const JobSpec& spec, std::mt19937_64& rng, Workload& w) {
  constexpr int64_t kSide = 8, kIn = 2;
  const int64_t c = spec.channels;
  const int64_t features = kSide * kSide * kIn;
  w.shards_ = spec.cores;
  w.learning_rate_ = static_cast<float>(spec.learning_rate);
  const int64_t shard_batch = spec.batch / spec.cores;
  if (w.Generating()) {
    for (auto& shard : TeacherLabelled(rng, spec.batch, features, kClasses, w.shards_,
                                       {kSide, kSide, kIn}, w.cancel_)) {
      w.data_.push_back(std::move(shard));
    }
  }
  engine::Graph& g = w.graph_;
  g = engine::Graph("cnn_train_step");
  engine::Conv2DParams same;
  same.padding = engine::ConvPadding::kSame;
  g.Parameter("x", {shard_batch, kSide, kSide, kIn});
  g.Parameter("labels", {shard_batch}, DType::kI32);
  g.Parameter("filter", {3, 3, kIn, c});
  g.Parameter("dense", {kSide * kSide * c, kClasses});
  if (w.Generating()) {
    w.weights_["filter"] =
        Make({3, 3, kIn, c}, Normal(rng, w.cancel_, 9 * kIn * c, std::sqrt(2.0 / (9 * kIn))));
    w.weights_["dense"] = Make({kSide * kSide * c, kClasses},
                               Normal(rng, w.cancel_, kSide * kSide * c * kClasses,
                                      std::sqrt(1.0 / static_cast<double>(kSide * kSide * c))));
  }
  g.Conv2D("z", "x", "filter", same);
  g.Relu("h", "z");
  g.Reshape("flat", "h", {shard_batch, kSide * kSide * c});
  g.Dot("logits", "flat", "dense");
  w.loss_id_ = g.SoftmaxCrossEntropy("loss", "logits", "labels");
  g.MarkOutput("loss");
  g.SoftmaxCrossEntropyGrad("dlogits", "logits", "labels");
  g.MarkOutput(g.Dot("ddense", "flat", "dlogits", /*transpose_lhs=*/true));
  g.Dot("dflat", "dlogits", "dense", false, /*transpose_rhs=*/true);
  g.Reshape("dh", "dflat", {shard_batch, kSide, kSide, c});
  g.ReluGrad("dz", "z", "dh");
  g.MarkOutput(g.Conv2DBackpropFilter("dfilter", "x", {3, 3, kIn, c}, "dz", same));
  w.grads_ = {{"dense", "ddense"}, {"filter", "dfilter"}};
}

Result<Workload> Workload::Build(const JobSpec& spec, const std::atomic<bool>* cancel) {
  return Build(spec, true, cancel);
}

Result<Workload> Workload::BuildGraphOnly(const JobSpec& spec) {
  return Build(spec, false, nullptr);
}

Result<Workload> Workload::Build(const JobSpec& spec, bool values,
                                 const std::atomic<bool>* cancel) {
  Workload w;
  w.values_ = values;
  w.cancel_ = cancel;
  std::mt19937_64 rng(spec.seed * 0x9E3779B97F4A7C15ull + 1);
  switch (spec.kind) {
    case WorkloadKind::kMatmul: {
      w.graph_ = engine::Graph("matmul");
      engine::Init init = engine::Init::Random(spec.seed, engine::Init::Distribution::kNormal);
      w.graph_.Parameter("a", {spec.m, spec.k}, spec.dtype, init);
      init.seed = spec.seed + 1;
      w.graph_.Parameter("b", {spec.k, spec.n}, spec.dtype, init);
      w.graph_.MarkOutput(w.graph_.Dot("c", "a", "b"));
      break;
    }
    case WorkloadKind::kHlo:
      // An HLO module is no engine graph: JobManager runs it with RunHloJob (hlo_job_runner.h).
      return Status::InvalidArgument("hlo: an HLO module runs as an hlo job, not as a workload");
    case WorkloadKind::kProgram: {
      if (!spec.graph) {
        return Status::InvalidArgument("program: the spec carries no graph (see ParseJobSpec)");
      }
      w.program_ = spec.graph;
      break;
    }
    case WorkloadKind::kCnn:
      break;  // BuildCnn below
    case WorkloadKind::kTransformer:
      BuildTransformer(spec, rng, w);
      break;
    case WorkloadKind::kMlp: {
      w.shards_ = spec.cores;
      w.learning_rate_ = static_cast<float>(spec.learning_rate);
      const int64_t shard_batch = spec.batch / spec.cores;
      if (w.Generating()) {
        // The dataset and the teacher are fixed by the seed; labels = argmax(x · teacher).
        for (auto& shard : TeacherLabelled(rng, spec.batch, kFeatures, kClasses, w.shards_,
                                           {kFeatures}, w.cancel_)) {
          w.data_.push_back(std::move(shard));
        }
      }
      engine::Graph& g = w.graph_;
      g = engine::Graph("mlp_train_step");
      g.Parameter("x", {shard_batch, kFeatures});
      g.Parameter("labels", {shard_batch}, DType::kI32);
      // Forward: h0 = x; z_i = h_{i-1}·w_i; h_i = relu(z_i); logits = h_L·w_out.
      std::vector<int64_t> widths{kFeatures};
      for (int64_t l = 0; l < spec.layers; ++l) widths.push_back(spec.hidden);
      widths.push_back(kClasses);
      const int64_t n_weights = static_cast<int64_t>(widths.size()) - 1;
      std::string h = "x";
      std::vector<std::string> inputs, pre;
      for (int64_t i = 0; i < n_weights; ++i) {
        const std::string wid = "w" + std::to_string(i);
        g.Parameter(wid, {widths[i], widths[i + 1]});
        // He initialisation keeps the ReLU stack's activations O(1).
        if (w.Generating()) {
          w.weights_[wid] =
              Make({widths[i], widths[i + 1]},
                   Normal(rng, w.cancel_, widths[i] * widths[i + 1], std::sqrt(2.0 / widths[i])));
        }
        inputs.push_back(h);
        const std::string z = g.Dot("z" + std::to_string(i), h, wid);
        pre.push_back(z);
        h = i + 1 < n_weights ? g.Relu("h" + std::to_string(i), z) : z;
      }
      w.loss_id_ = g.SoftmaxCrossEntropy("loss", h, "labels");
      g.MarkOutput("loss");
      // Backward.
      std::string dy = g.SoftmaxCrossEntropyGrad("dlogits", h, "labels");
      for (int64_t i = n_weights - 1; i >= 0; --i) {
        const std::string wid = "w" + std::to_string(i);
        const std::string dw = g.Dot("d" + wid, inputs[i], dy, /*transpose_lhs=*/true);
        g.MarkOutput(dw);
        w.grads_.emplace_back(wid, dw);
        if (i == 0) break;
        const std::string dh = g.Dot("dh" + std::to_string(i - 1), dy, wid, false, true);
        dy = g.ReluGrad("dz" + std::to_string(i - 1), pre[i - 1], dh);
      }
      break;
    }
  }
  if (spec.kind == WorkloadKind::kCnn) BuildCnn(spec, rng, w);
  if (!w.graph().status().ok()) return w.graph().status();
  if (cancel != nullptr && cancel->load()) {
    return Status::Cancelled("cancelled while generating the workload's values");
  }
  w.cancel_ = nullptr;
  if (w.data_.empty()) w.data_.resize(1);
  return w;
}

std::map<std::string, Tensor> Workload::Feeds(int shard) const {
  std::map<std::string, Tensor> feeds = weights_;
  for (const auto& [id, t] : data_[static_cast<size_t>(shard)]) feeds[id] = t;
  return feeds;
}

engine::FeedView Workload::FeedView(int shard) const {
  engine::FeedView view;
  for (const auto& [id, t] : weights_) view[id] = &t;
  for (const auto& [id, t] : data_[static_cast<size_t>(shard)]) view[id] = &t;
  return view;
}

double Workload::GradientBytes() const {
  double bytes = 0;
  for (const auto& [id, t] : weights_) bytes += static_cast<double>(t.bytes());
  return bytes;
}

bool Workload::ApplySgd(const std::vector<std::map<std::string, engine::Tensor>>& shard_outputs,
                        const engine::ParallelContext& parallel) {
  if (shard_outputs.empty()) return !parallel.cancel.Stopped();
  std::vector<const float*> grads(shard_outputs.size());
  for (const auto& [wid, gid] : grads_) {
    for (size_t s = 0; s < shard_outputs.size(); ++s) grads[s] = shard_outputs[s].at(gid).f32();
    engine::Tensor& weight = weights_[wid];
    if (!SgdUpdate(weight.f32(), weight.num_elements(), grads, parallel)) return false;
  }
  return true;
}

bool Workload::SgdUpdate(float* weight, int64_t n, const std::vector<const float*>& shard_grads,
                         const engine::ParallelContext& parallel) const {
  if (shard_grads.empty()) return !parallel.cancel.Stopped();
  const float scale = learning_rate_ / static_cast<float>(shard_grads.size());
  return engine::ParallelChunks(parallel, n, engine::kElementwiseGrain,
                                [&](int64_t begin, int64_t end) {
                                  for (const float* gv : shard_grads) {
                                    for (int64_t i = begin; i < end; ++i)
                                      weight[i] -= scale * gv[i];
                                  }
                                });
}

}  // namespace tpuemu::service
