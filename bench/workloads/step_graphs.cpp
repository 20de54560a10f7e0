#include "bench/workloads/step_graphs.h"

#include <cmath>

#include "engine/frontend/from_graph.h"
#include "engine/frontend/init_values.h"

namespace tpuemu::bench {
namespace {

using engine::Conv2DParams;
using engine::ConvPadding;
using engine::DType;
using engine::FloatBuffer;
using engine::Graph;
using engine::Init;
using engine::ReduceKind;
using engine::Shape;
using engine::Tensor;

constexpr int64_t kClasses = 4;

Tensor Normal(Shape shape, double stddev, std::mt19937_64& rng) {
  std::normal_distribution<float> dist(0.0f, static_cast<float>(stddev));
  FloatBuffer v(static_cast<size_t>(shape.NumElements()));
  for (float& x : v) x = dist(rng);
  return *Tensor::FromF32(std::move(shape), std::move(v));
}

Tensor Labels(int64_t n, std::mt19937_64& rng) {
  std::vector<int32_t> v(static_cast<size_t>(n));
  for (int32_t& x : v) x = static_cast<int32_t>(rng() % kClasses);
  return *Tensor::FromI32({n}, v);
}

// Parameters x [rows, features] ~ N(0, 1) and labels int32[rows], fed.
void AddData(StepGraph& w, int64_t rows, int64_t features, std::mt19937_64& rng) {
  w.graph.Parameter("x", {rows, features});
  w.graph.Parameter("labels", {rows}, DType::kI32);
  w.feeds["x"] = Normal({rows, features}, 1.0, rng);
  w.feeds["labels"] = Labels(rows, rng);
}

}  // namespace

StepGraph MatmulGraph(std::mt19937_64& rng) {
  StepGraph w{"matmul 2048^3", Graph("matmul"), {}, 0.8};
  w.graph.Parameter("a", {2048, 2048});
  w.graph.Parameter("b", {2048, 2048});
  w.graph.MarkOutput(w.graph.Dot("c", "a", "b"));
  w.feeds["a"] = Normal({2048, 2048}, 1.0, rng);
  w.feeds["b"] = Normal({2048, 2048}, 1.0, rng);
  return w;
}

StepGraph MlpGraph(int64_t batch, std::mt19937_64& rng) {
  constexpr int64_t kHidden = 1024, kLayers = 4, kFeatures = 16;
  StepGraph w{"mlp 4x1024, batch " + std::to_string(batch), Graph("mlp"), {}, 0.5};
  Graph& g = w.graph;
  AddData(w, batch, kFeatures, rng);
  std::vector<int64_t> widths{kFeatures};
  for (int64_t l = 0; l < kLayers; ++l) widths.push_back(kHidden);
  widths.push_back(kClasses);
  std::vector<std::string> inputs, pre;
  std::string h = "x";
  const size_t layers = widths.size() - 1;
  for (size_t i = 0; i < layers; ++i) {
    const std::string wid = "w" + std::to_string(i);
    g.Parameter(wid, {widths[i], widths[i + 1]});
    w.feeds[wid] = Normal({widths[i], widths[i + 1]}, std::sqrt(2.0 / widths[i]), rng);
    inputs.push_back(h);
    pre.push_back(g.Dot("z" + std::to_string(i), h, wid));
    h = i + 1 < layers ? g.Relu("h" + std::to_string(i), pre.back()) : pre.back();
  }
  g.MarkOutput(g.SoftmaxCrossEntropy("loss", h, "labels"));
  std::string dy = g.SoftmaxCrossEntropyGrad("dlogits", h, "labels");
  for (size_t i = layers; i-- > 0;) {
    const std::string wid = "w" + std::to_string(i);
    g.MarkOutput(g.Dot("d" + wid, inputs[i], dy, /*transpose_lhs=*/true));
    w.grads.push_back({wid, "d" + wid});
    if (i == 0) break;
    const std::string dh = g.Dot("dh" + std::to_string(i), dy, wid, false, true);
    dy = g.ReluGrad("dz" + std::to_string(i), pre[i - 1], dh);
  }
  return w;
}

StepGraph CnnGraph(std::mt19937_64& rng) {
  constexpr int64_t kBatch = 256, kSide = 8, kIn = 2, kChannels = 16;
  // Its ops are small (1-3 MFLOP each beside a GEMM of 17 GFLOP): no GFLOPS target.
  StepGraph w{"cnn 3x3x16, batch 256", Graph("cnn"), {}, 0.0};
  Graph& g = w.graph;
  Conv2DParams same;
  same.padding = ConvPadding::kSame;
  g.Parameter("x", {kBatch, kSide, kSide, kIn});
  w.feeds["x"] = Normal({kBatch, kSide, kSide, kIn}, 1.0, rng);
  g.Parameter("labels", {kBatch}, DType::kI32);
  w.feeds["labels"] = Labels(kBatch, rng);
  g.Parameter("filter", {3, 3, kIn, kChannels});
  w.feeds["filter"] = Normal({3, 3, kIn, kChannels}, std::sqrt(2.0 / (9 * kIn)), rng);
  g.Parameter("dense", {kSide * kSide * kChannels, kClasses});
  w.feeds["dense"] = Normal({kSide * kSide * kChannels, kClasses}, 0.03, rng);
  g.Conv2D("z", "x", "filter", same);
  g.Relu("h", "z");
  g.Reshape("flat", "h", {kBatch, kSide * kSide * kChannels});
  g.Dot("logits", "flat", "dense");
  g.MarkOutput(g.SoftmaxCrossEntropy("loss", "logits", "labels"));
  g.SoftmaxCrossEntropyGrad("dlogits", "logits", "labels");
  g.MarkOutput(g.Dot("ddense", "flat", "dlogits", /*transpose_lhs=*/true));
  w.grads.push_back({"dense", "ddense"});
  g.Dot("dflat", "dlogits", "dense", false, /*transpose_rhs=*/true);
  g.Reshape("dh", "dflat", {kBatch, kSide, kSide, kChannels});
  g.ReluGrad("dz", "z", "dh");
  g.MarkOutput(g.Conv2DBackpropFilter("dfilter", "x", {3, 3, kIn, kChannels}, "dz", same));
  w.grads.push_back({"filter", "dfilter"});
  return w;
}

StepGraph TransformerGraph(int64_t batch, std::mt19937_64& rng) {
  constexpr int64_t kLayers = 2, d = 256, heads = 4, s = 128, dh = d / heads;
  const int64_t b = batch, t = b * s;
  StepGraph w{
      "transformer 2x256, seq 128, batch " + std::to_string(batch), Graph("transformer"), {}, 0.5};
  Graph& g = w.graph;
  AddData(w, t, d, rng);
  g.Constant("scale", {}, Init::Fill(1.0 / std::sqrt(static_cast<double>(dh))));
  auto weight = [&](const std::string& id, int64_t in, int64_t out) {
    g.Parameter(id, {in, out});
    w.feeds[id] = Normal({in, out}, 1.0 / std::sqrt(static_cast<double>(in)), rng);
    return id;
  };
  auto heads_of = [&](const std::string& id, const std::string& x) {  // [t, d] -> [b·h, s, dh]
    g.Reshape(id + ".4d", x, {b, s, heads, dh});
    g.Transpose(id + ".t", id + ".4d", {0, 2, 1, 3});
    return g.Reshape(id, id + ".t", {b * heads, s, dh});
  };
  auto tokens_of = [&](const std::string& id, const std::string& x) {  // and back
    g.Reshape(id + ".4d", x, {b, heads, s, dh});
    g.Transpose(id + ".t", id + ".4d", {0, 2, 1, 3});
    return g.Reshape(id, id + ".t", {t, d});
  };
  struct Saved {
    std::string in, qh, kh, vh, probs, ctx, r1, up, gelu;
  };
  std::vector<Saved> saved;
  std::string h = "x";
  for (int64_t l = 0; l < kLayers; ++l) {
    const std::string p = "l" + std::to_string(l) + ".";
    Saved sv{h};
    sv.qh = heads_of(p + "qh", g.Dot(p + "q", h, weight(p + "wq", d, d)));
    sv.kh = heads_of(p + "kh", g.Dot(p + "k", h, weight(p + "wk", d, d)));
    sv.vh = heads_of(p + "vh", g.Dot(p + "v", h, weight(p + "wv", d, d)));
    g.Dot(p + "scores", sv.qh, sv.kh, false, true);
    sv.probs = g.Softmax(p + "probs", g.Mul(p + "scaled", p + "scores", "scale"));
    sv.ctx = tokens_of(p + "ctx", g.Dot(p + "ctxh", sv.probs, sv.vh));
    sv.r1 = g.Add(p + "r1", h, g.Dot(p + "attn", sv.ctx, weight(p + "wo", d, d)));
    sv.up = g.Dot(p + "up", sv.r1, weight(p + "w1", d, 4 * d));
    sv.gelu = g.Gelu(p + "gelu", sv.up);
    h = g.Add(p + "r2", sv.r1, g.Dot(p + "down", sv.gelu, weight(p + "w2", 4 * d, d)));
    saved.push_back(sv);
  }
  g.Dot("logits", h, weight("wout", d, kClasses));
  g.MarkOutput(g.SoftmaxCrossEntropy("loss", "logits", "labels"));
  // The gradient of weight p + name (x·W with x = in) given dy, as output "<p>d<name>".
  auto grad = [&](const std::string& p, const std::string& name, const std::string& in,
                  const std::string& dy) {
    g.MarkOutput(g.Dot(p + "d" + name, in, dy, /*transpose_lhs=*/true));
    w.grads.push_back({p + name, p + "d" + name});
  };
  g.SoftmaxCrossEntropyGrad("dlogits", "logits", "labels");
  grad("", "wout", h, "dlogits");
  std::string dy = g.Dot("dy", "dlogits", "wout", false, true);
  for (int64_t l = kLayers - 1; l >= 0; --l) {
    const std::string p = "l" + std::to_string(l) + ".";
    const Saved& sv = saved[static_cast<size_t>(l)];
    grad(p, "w2", sv.gelu, dy);
    g.GeluGrad(p + "dup", sv.up, g.Dot(p + "dgelu", dy, p + "w2", false, true));
    grad(p, "w1", sv.r1, p + "dup");
    const std::string dr1 =
        g.Add(p + "dr1", dy, g.Dot(p + "dr1.mlp", p + "dup", p + "w1", false, true));
    grad(p, "wo", sv.ctx, dr1);
    const std::string dctx = heads_of(p + "dctxh", g.Dot(p + "dctx", dr1, p + "wo", false, true));
    g.Dot(p + "dprobs", dctx, sv.vh, false, true);
    const std::string dvh = g.Dot(p + "dvh", sv.probs, dctx, true);
    g.Mul(p + "dp.p", p + "dprobs", sv.probs);
    g.Reduce(p + "dp.sum", p + "dp.p", ReduceKind::kSum, {2}, true);
    g.Sub(p + "dp.c", p + "dprobs", p + "dp.sum");
    const std::string ds =
        g.Mul(p + "dscores", g.Mul(p + "dscaled", sv.probs, p + "dp.c"), "scale");
    const std::string dq = tokens_of(p + "dq", g.Dot(p + "dqh", ds, sv.kh));
    const std::string dk = tokens_of(p + "dk", g.Dot(p + "dkh", ds, sv.qh, true));
    const std::string dv = tokens_of(p + "dv", dvh);
    grad(p, "wq", sv.in, dq);
    grad(p, "wk", sv.in, dk);
    grad(p, "wv", sv.in, dv);
    if (l == 0) break;
    g.Add(p + "din.q", dr1, g.Dot(p + "din.dq", dq, p + "wq", false, true));
    g.Add(p + "din.k", p + "din.q", g.Dot(p + "din.dk", dk, p + "wk", false, true));
    dy = g.Add(p + "din", p + "din.k", g.Dot(p + "din.dv", dv, p + "wv", false, true));
  }
  return w;
}

Result<engine::hlo::Value> ArgumentFor(const StepGraph& g, const std::string& id) {
  if (auto fed = g.feeds.find(id); fed != g.feeds.end())
    return engine::hlo::ArgumentOf(fed->second);
  const engine::Op* op = g.graph.Find(id);
  if (op == nullptr) return Status::InvalidArgument("no parameter " + id + " in " + g.name);
  Tensor value(op->dtype, op->shape);
  TPUEMU_RETURN_IF_ERROR(engine::MaterializeInit(op->attrs.init, value));
  return engine::hlo::ArgumentOf(value);
}

std::vector<std::string> InstructionLabels(const engine::hlo::Module& module) {
  std::vector<std::string> labels;
  for (const engine::hlo::Instruction& inst : module.entry_computation().instructions) {
    labels.push_back(inst.name + " " + std::string(engine::hlo::OpcodeName(inst.opcode)) + " " +
                     inst.shape.ToString());
  }
  return labels;
}

}  // namespace tpuemu::bench
