// The transformer workload (Workload::BuildTransformer): one training step, forward and backward,
// of `layers` blocks on a fixed synthetic batch. Shapes, per shard of b sequences, t = b·seqLen
// tokens, d = dModel, h heads of dh = d / h:
//
//   x2 = reshape(x [b, s, d]) -> [t, d]
//   per block:  q, k, v = x2·Wq, x2·Wk, x2·Wv                     (MXU)
//               qh, kh, vh = split heads -> [b·h, s, dh]          (reshape, transpose, reshape)
//               p = softmax(scale · qh·khᵀ)  [b·h, s, s]          (batched dot on the MXU)
//               ctx = merge heads(p·vh) -> [t, d]; r1 = x2 + ctx·Wo
//               u = r1·W1 [t, 4d]; y = r1 + gelu(u)·W2
//   logits = y·Wout [t, 4]; loss = mean softmax cross-entropy over the tokens.
//
// The backward pass uses only existing ops: dots with transposed operands for every gradient,
// gelu_grad for the MLP, and for the softmax dS = P ⊙ (dP − Σ_last(dP ⊙ P)) (reduce keep_dims,
// numpy broadcast in sub). Labels: argmax over 4 classes of (x_token + mean over its sequence) ·
// teacher, with teacher a fixed random [d, 4] matrix, so both the residual path and attention
// have something to learn and the loss falls under SGD.
#include <algorithm>
#include <cmath>
#include <random>

#include "service/workloads/workload_data.h"
#include "service/workloads/workloads.h"

namespace tpuemu::service {
namespace {

using engine::DType;
using engine::Graph;
using engine::Shape;
using engine::Tensor;

constexpr int64_t kClasses = 4;

using workload_data::Make;
using workload_data::Normal;

}  // namespace

void Workload::BuildTransformer(const JobSpec& spec, std::mt19937_64& rng, Workload& w) {
  const int64_t d = spec.d_model, heads = spec.heads, dh = d / heads, s = spec.seq_len;
  const int64_t layers = spec.layers;
  w.shards_ = spec.cores;
  w.learning_rate_ = static_cast<float>(spec.learning_rate);
  const int64_t b = spec.batch / spec.cores;  // sequences per shard
  const int64_t t = b * s;                    // tokens per shard

  if (w.Generating()) {
    // Data: x ~ N(0, 1); labels from the teacher on (token + its sequence mean).
    engine::FloatBuffer x = Normal(rng, w.cancel_, spec.batch * s * d, 1.0);
    engine::FloatBuffer teacher = Normal(rng, w.cancel_, d * kClasses, 1.0);
    std::vector<int32_t> labels(static_cast<size_t>(spec.batch * s));
    std::vector<float> mean(static_cast<size_t>(d));
    for (int64_t i = 0; i < spec.batch; ++i) {
      std::fill(mean.begin(), mean.end(), 0.0f);
      for (int64_t j = 0; j < s; ++j) {
        for (int64_t f = 0; f < d; ++f) mean[f] += x[(i * s + j) * d + f] / static_cast<float>(s);
      }
      for (int64_t j = 0; j < s; ++j) {
        float best = -1e30f;
        for (int64_t c = 0; c < kClasses; ++c) {
          float v = 0;
          for (int64_t f = 0; f < d; ++f) {
            v += (x[(i * s + j) * d + f] + mean[f]) * teacher[f * kClasses + c];
          }
          if (v > best) best = v, labels[static_cast<size_t>(i * s + j)] = static_cast<int32_t>(c);
        }
      }
    }
    for (int shard = 0; shard < w.shards_; ++shard) {
      const auto xb = x.begin() + shard * t * d;
      std::map<std::string, Tensor> data;
      data["x"] = Make({b, s, d}, engine::FloatBuffer(xb, xb + t * d));
      const auto lb = labels.begin() + shard * t;
      data["labels"] = std::move(Tensor::FromI32({t}, std::vector<int32_t>(lb, lb + t))).value();
      w.data_.push_back(std::move(data));
    }
  }

  Graph& g = w.graph_;
  g = Graph("transformer_train_step");
  g.Parameter("x", {b, s, d});
  g.Parameter("labels", {t}, DType::kI32);
  g.Constant("scale", {}, engine::Init::Fill(1.0 / std::sqrt(static_cast<double>(dh))));
  // Weights: 1/sqrt(fan_in), the residual branches' outputs further scaled by 1/sqrt(2·layers).
  const double branch = 1.0 / std::sqrt(2.0 * static_cast<double>(layers));
  auto weight = [&](const std::string& id, int64_t in, int64_t out, double extra = 1.0) {
    g.Parameter(id, {in, out});
    if (w.Generating())
      w.weights_[id] =
          Make({in, out}, Normal(rng, w.cancel_, in * out, extra / std::sqrt(double(in))));
    return id;
  };
  // [t, d] -> [b·h, s, dh] and back.
  auto split = [&](const std::string& id, const std::string& x2) {
    g.Reshape(id + ".4d", x2, {b, s, heads, dh});
    g.Transpose(id + ".bhsd", id + ".4d", {0, 2, 1, 3});
    return g.Reshape(id, id + ".bhsd", {b * heads, s, dh});
  };
  auto merge = [&](const std::string& id, const std::string& x3) {
    g.Reshape(id + ".4d", x3, {b, heads, s, dh});
    g.Transpose(id + ".bshd", id + ".4d", {0, 2, 1, 3});
    return g.Reshape(id, id + ".bshd", {t, d});
  };

  // Forward. Per layer the ids needed by the backward pass.
  struct Saved {
    std::string in, qh, kh, vh, probs, ctx, r1, up, gelu;
  };
  std::vector<Saved> saved;
  std::string h = g.Reshape("x2", "x", {t, d});
  for (int64_t l = 0; l < layers; ++l) {
    const std::string p = "l" + std::to_string(l) + ".";
    Saved sv;
    sv.in = h;
    const std::string wq = weight(p + "wq", d, d), wk = weight(p + "wk", d, d),
                      wv = weight(p + "wv", d, d), wo = weight(p + "wo", d, d, branch),
                      w1 = weight(p + "w1", d, 4 * d), w2 = weight(p + "w2", 4 * d, d, branch);
    sv.qh = split(p + "qh", g.Dot(p + "q", h, wq));
    sv.kh = split(p + "kh", g.Dot(p + "k", h, wk));
    sv.vh = split(p + "vh", g.Dot(p + "v", h, wv));
    g.Dot(p + "scores", sv.qh, sv.kh, false, /*transpose_rhs=*/true);
    sv.probs = g.Softmax(p + "probs", g.Mul(p + "scaled", p + "scores", "scale"), -1);
    sv.ctx = merge(p + "ctx", g.Dot(p + "ctxh", sv.probs, sv.vh));
    sv.r1 = g.Add(p + "res1", h, g.Dot(p + "attn", sv.ctx, wo));
    sv.up = g.Dot(p + "up", sv.r1, w1);
    sv.gelu = g.Gelu(p + "gelu", sv.up);
    h = g.Add(p + "res2", sv.r1, g.Dot(p + "down", sv.gelu, w2));
    saved.push_back(sv);
  }
  const std::string wout = weight("wout", d, kClasses);
  g.Dot("logits", h, wout);
  w.loss_id_ = g.SoftmaxCrossEntropy("loss", "logits", "labels");
  g.MarkOutput("loss");

  // Backward.
  auto grad = [&](const std::string& wid, const std::string& id, const std::string& in,
                  const std::string& dy) {
    g.MarkOutput(g.Dot(id, in, dy, /*transpose_lhs=*/true));
    w.grads_.emplace_back(wid, id);
  };
  g.SoftmaxCrossEntropyGrad("dlogits", "logits", "labels");
  grad(wout, "dwout", h, "dlogits");
  std::string dy = g.Dot("dy" + std::to_string(layers - 1), "dlogits", wout, false, true);
  for (int64_t l = layers - 1; l >= 0; --l) {
    const std::string p = "l" + std::to_string(l) + ".";
    const Saved& sv = saved[static_cast<size_t>(l)];
    // y = r1 + gelu(r1·W1)·W2
    grad(p + "w2", p + "dw2", sv.gelu, dy);
    g.GeluGrad(p + "dup", sv.up, g.Dot(p + "dgelu", dy, p + "w2", false, true));
    grad(p + "w1", p + "dw1", sv.r1, p + "dup");
    const std::string dr1 =
        g.Add(p + "dres1", dy, g.Dot(p + "dres1.mlp", p + "dup", p + "w1", false, true));
    // r1 = in + ctx·Wo
    grad(p + "wo", p + "dwo", sv.ctx, dr1);
    const std::string dctxh = split(p + "dctxh", g.Dot(p + "dctx", dr1, p + "wo", false, true));
    // ctx = P·V: dP = dctx·Vᵀ, dV = Pᵀ·dctx
    g.Dot(p + "dprobs", dctxh, sv.vh, false, /*transpose_rhs=*/true);
    const std::string dvh = g.Dot(p + "dvh", sv.probs, dctxh, /*transpose_lhs=*/true);
    // Softmax: dS = P ⊙ (dP − Σ_last(dP ⊙ P)); then the scale.
    g.Mul(p + "dprobs.p", p + "dprobs", sv.probs);
    g.Reduce(p + "dprobs.rowsum", p + "dprobs.p", engine::ReduceKind::kSum, {2}, true);
    g.Sub(p + "dprobs.centered", p + "dprobs", p + "dprobs.rowsum");
    g.Mul(p + "dscaled", sv.probs, p + "dprobs.centered");
    const std::string ds = g.Mul(p + "dscores", p + "dscaled", "scale");
    // scores = Q·Kᵀ: dQ = dS·K, dK = dSᵀ·Q
    const std::string dq = merge(p + "dq", g.Dot(p + "dqh", ds, sv.kh));
    const std::string dk = merge(p + "dk", g.Dot(p + "dkh", ds, sv.qh, /*transpose_lhs=*/true));
    const std::string dv = merge(p + "dv", dvh);
    grad(p + "wq", p + "dwq", sv.in, dq);
    grad(p + "wk", p + "dwk", sv.in, dk);
    grad(p + "wv", p + "dwv", sv.in, dv);
    if (l == 0) break;  // no gradient for the data
    g.Add(p + "din.q", dr1, g.Dot(p + "din.dq", dq, p + "wq", false, true));
    g.Add(p + "din.k", p + "din.q", g.Dot(p + "din.dk", dk, p + "wk", false, true));
    dy = g.Add("dy" + std::to_string(l - 1), p + "din.k",
               g.Dot(p + "din.dv", dv, p + "wv", false, true));
  }
}

}  // namespace tpuemu::service
