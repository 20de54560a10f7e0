#include "engine/cost/transformer_model.h"

#include <algorithm>
#include <array>

#include "engine/cost/efficiency.h"

namespace tpuemu::engine::cost {
namespace {

using nlohmann::json;

// Meta's published shapes, as MaxText's configs/models/*.yml spell them.
struct Preset {
  std::string_view name;
  TransformerShape shape;
};
const std::array<Preset, 5>& Presets() {
  static const std::array<Preset, 5> presets = {{
      {"llama2-7b", {"llama2-7b", 32, 4096, 32, 32, 128, 11008, 32000, 4096, 256, true}},
      {"llama2-13b", {"llama2-13b", 40, 5120, 40, 40, 128, 13824, 32000, 4096, 256, true}},
      {"llama2-70b", {"llama2-70b", 80, 8192, 64, 8, 128, 28672, 32000, 4096, 256, true}},
      {"llama3-8b", {"llama3-8b", 32, 4096, 32, 8, 128, 14336, 128256, 8192, 256, true}},
      {"llama3-70b", {"llama3-70b", 80, 8192, 64, 8, 128, 28672, 128256, 8192, 256, true}},
  }};
  return presets;
}

constexpr int64_t kMaxTokensPerStep = int64_t{1} << 33;

Status BadModelField(const std::string& field, const std::string& what) {
  return Status::InvalidArgument("model." + field + " " + what);
}

Status ReadInt(const json& model, const char* field, int64_t lo, int64_t hi, int64_t* out) {
  if (!model.contains(field)) return Status::Ok();
  const json& v = model[field];
  if (!v.is_number_integer() || v.get<int64_t>() < lo || v.get<int64_t>() > hi) {
    return BadModelField(field, "must be an integer in " + std::to_string(lo) + ".." + std::to_string(hi));
  }
  *out = v.get<int64_t>();
  return Status::Ok();
}

// Per token and layer, in elements, the widths the cost model needs.
struct Widths {
  double d, q, kv, f;  // dModel, heads·headDim, kvHeads·headDim, ffn
  double mlp_mats;     // 3 gated, 2 not
};

Widths WidthsOf(const TransformerShape& s) {
  return {static_cast<double>(s.d_model), static_cast<double>(s.heads * s.head_dim),
          static_cast<double>(s.kv_heads * s.head_dim), static_cast<double>(s.ffn),
          s.gated_mlp ? 3.0 : 2.0};
}

double LayerParameters(const Widths& w) {
  return w.d * (w.q + 2 * w.kv) + w.q * w.d + w.mlp_mats * w.d * w.f + 2 * w.d;
}

StateBytes AdamState(double params) {
  // f32 master weights and gradients, Adam's two f32 moments, bf16 copies for the all-gather.
  return {params * 4, params * 4, params * 8, params * 2};
}

// A weight matmul x[tokens, k] · W[k, n] and its two backward GEMMs. `tp_dim` is the dimension
// of the FORWARD GEMM tensor parallelism splits (kN: column-parallel, kK: row-parallel).
void AddWeightMatmul(std::vector<ProfileOp>& ops, const std::string& name, double tokens, double k,
                     double n, GemmDim tp_dim, bool per_layer, double forward_count) {
  const auto i64 = [](double v) { return static_cast<int64_t>(v); };
  const double flops = 2 * tokens * k * n;
  const double bytes = 2 * (tokens * k + k * n + tokens * n);  // bf16 operands and result
  ProfileOp fwd{.name = name,
                .unit = OpUnit::kMxu,
                .tp_split = tp_dim != GemmDim::kNone,
                .per_layer = per_layer,
                .count = forward_count,
                .mxu_flops = flops,
                .hbm_bytes = bytes,
                .gemm = {i64(tokens), i64(n), i64(k)},
                .batch_dim = GemmDim::kM,
                .tp_dim = tp_dim};
  ProfileOp dgrad = fwd;  // dx[tokens, k] = dy[tokens, n] · Wᵀ[n, k]
  dgrad.name = name + ".dgrad";
  dgrad.count = 1;
  dgrad.gemm = {i64(tokens), i64(k), i64(n)};
  dgrad.tp_dim = tp_dim == GemmDim::kN ? GemmDim::kK : GemmDim::kN;
  ProfileOp wgrad = fwd;  // dW[k, n] = xᵀ[k, tokens] · dy[tokens, n]
  wgrad.name = name + ".wgrad";
  wgrad.count = 1;
  wgrad.gemm = {i64(k), i64(n), i64(tokens)};
  wgrad.batch_dim = GemmDim::kK;
  wgrad.tp_dim = tp_dim == GemmDim::kN ? GemmDim::kN : GemmDim::kM;
  ops.push_back(std::move(fwd));
  ops.push_back(std::move(dgrad));
  ops.push_back(std::move(wgrad));
}

// An elementwise op over `elements` (bf16) reading `reads` and writing `writes` tensors of that
// size, and its backward pass (twice the traffic and the vector work).
void AddVector(std::vector<ProfileOp>& ops, const std::string& name, double elements, double reads,
               double writes, double ops_per_element, bool tp_split, bool per_layer,
               double forward_count) {
  ProfileOp fwd{.name = name,
                .unit = OpUnit::kVector,
                .tp_split = tp_split,
                .per_layer = per_layer,
                .count = forward_count,
                .vpu_ops = elements * ops_per_element,
                .hbm_bytes = 2 * elements * (reads + writes)};
  ProfileOp bwd = fwd;
  bwd.name = name + ".bwd";
  bwd.count = 1;
  bwd.vpu_ops *= 2;
  bwd.hbm_bytes *= 2;
  ops.push_back(std::move(fwd));
  ops.push_back(std::move(bwd));
}

}  // namespace

std::string_view RematName(Remat remat) {
  switch (remat) {
    case Remat::kNone:
      return "none";
    case Remat::kMinimal:
      return "minimal";
    case Remat::kFull:
      return "full";
  }
  return "none";
}

Result<Remat> ParseRemat(std::string_view name) {
  for (Remat r : kAllRemats) {
    if (name == RematName(r)) return r;
  }
  return Status::InvalidArgument("unknown remat policy '" + std::string(name) +
                                 "' (expected none, minimal or full)");
}

std::vector<std::string> TransformerPresets() {
  std::vector<std::string> names;
  for (const Preset& p : Presets()) names.emplace_back(p.name);
  return names;
}

Result<TransformerShape> ParseTransformerShape(const json& model) {
  if (!model.is_object()) return Status::InvalidArgument("model must be an object");
  static const std::array<const char*, 12> kKnown = {"preset",  "layers",      "dModel",   "heads",
                                                     "kvHeads", "headDim",     "ffn",      "vocab",
                                                     "seqLen",  "globalBatch", "gatedMlp", "name"};
  for (const auto& item : model.items()) {
    const std::string& key = item.key();
    if (std::find_if(kKnown.begin(), kKnown.end(), [&](const char* k) { return key == k; }) ==
        kKnown.end()) {
      return BadModelField(key,
                 "is not a known field (expected preset, layers, dModel, heads, kvHeads, "
                 "headDim, ffn, vocab, seqLen, globalBatch, gatedMlp)");
    }
  }
  TransformerShape s;
  s.name = "custom";
  if (model.contains("preset")) {
    const json& p = model["preset"];
    const auto found = std::find_if(Presets().begin(), Presets().end(), [&](const Preset& x) {
      return p.is_string() && p.get<std::string>() == x.name;
    });
    if (found == Presets().end()) {
      std::string names;
      for (const std::string& n : TransformerPresets()) names += (names.empty() ? "" : ", ") + n;
      return BadModelField("preset", "must be one of " + names);
    }
    s = found->shape;
  }
  if (model.contains("name")) {
    if (!model["name"].is_string()) return BadModelField("name", "must be a string");
    s.name = model["name"].get<std::string>();
  }
  const int64_t heads_before = s.heads, d_before = s.d_model;
  // The bounds keep every per-chip GEMM's fold count x stream length (engine/timing.h, int64)
  // far from overflow; they are well above any model trained today.
  TPUEMU_RETURN_IF_ERROR(ReadInt(model, "layers", 1, 1000, &s.layers));
  TPUEMU_RETURN_IF_ERROR(ReadInt(model, "dModel", 1, 65536, &s.d_model));
  TPUEMU_RETURN_IF_ERROR(ReadInt(model, "heads", 1, 1024, &s.heads));
  if (s.heads != heads_before && !model.contains("kvHeads")) s.kv_heads = 0;
  if ((s.heads != heads_before || s.d_model != d_before) && !model.contains("headDim")) {
    s.head_dim = 0;
  }
  TPUEMU_RETURN_IF_ERROR(ReadInt(model, "kvHeads", 1, 1024, &s.kv_heads));
  TPUEMU_RETURN_IF_ERROR(ReadInt(model, "headDim", 1, 1024, &s.head_dim));
  TPUEMU_RETURN_IF_ERROR(ReadInt(model, "ffn", 1, 262144, &s.ffn));
  TPUEMU_RETURN_IF_ERROR(ReadInt(model, "vocab", 1, 1048576, &s.vocab));
  TPUEMU_RETURN_IF_ERROR(ReadInt(model, "seqLen", 1, 1048576, &s.seq_len));
  TPUEMU_RETURN_IF_ERROR(ReadInt(model, "globalBatch", 1, 1048576, &s.global_batch));
  if (model.contains("gatedMlp")) {
    if (!model["gatedMlp"].is_boolean()) return BadModelField("gatedMlp", "must be true or false");
    s.gated_mlp = model["gatedMlp"].get<bool>();
  }
  for (const auto& [field, value] : {std::pair{"layers", s.layers},
                                     {"dModel", s.d_model},
                                     {"heads", s.heads},
                                     {"ffn", s.ffn},
                                     {"vocab", s.vocab},
                                     {"seqLen", s.seq_len},
                                     {"globalBatch", s.global_batch}}) {
    if (value <= 0) return BadModelField(field, "is required (or give a preset)");
  }
  if (s.global_batch * s.seq_len > kMaxTokensPerStep) {
    return BadModelField("globalBatch", "x seqLen must be at most " + std::to_string(kMaxTokensPerStep) +
                                  " tokens per step");
  }
  if (s.kv_heads == 0) s.kv_heads = s.heads;
  if (s.head_dim == 0) {
    if (s.d_model % s.heads != 0 || s.d_model / s.heads > 1024) {
      return BadModelField("headDim", "is required when dModel / heads (" + std::to_string(s.d_model) +
                                " / " + std::to_string(s.heads) +
                                ") is not a whole number up to 1024");
    }
    s.head_dim = s.d_model / s.heads;
  }
  if (s.heads % s.kv_heads != 0) {
    return BadModelField("kvHeads", "must divide heads (" + std::to_string(s.heads) + "), got " +
                              std::to_string(s.kv_heads));
  }
  return s;
}

json TransformerShapeToJson(const TransformerShape& s) {
  return {{"name", s.name},         {"layers", s.layers},
          {"dModel", s.d_model},    {"heads", s.heads},
          {"kvHeads", s.kv_heads},  {"headDim", s.head_dim},
          {"ffn", s.ffn},           {"vocab", s.vocab},
          {"seqLen", s.seq_len},    {"globalBatch", s.global_batch},
          {"gatedMlp", s.gated_mlp}};
}

double TransformerParameters(const TransformerShape& s) {
  const Widths w = WidthsOf(s);
  return static_cast<double>(s.layers) * LayerParameters(w) + 2 * s.vocab * w.d + w.d;
}

double TransformerModelFlops(const TransformerShape& s) {
  const Widths w = WidthsOf(s);
  const double matmul_per_token =
      static_cast<double>(s.layers) *
          (2 * w.d * w.f * w.mlp_mats + 2 * w.d * (w.q + 2 * w.kv) + 2 * w.q * w.d) +
      2 * w.d * static_cast<double>(s.vocab);
  const double attention_per_token =
      static_cast<double>(s.layers) * 4 * static_cast<double>(s.seq_len) * w.q;
  const double tokens = static_cast<double>(s.global_batch) * static_cast<double>(s.seq_len);
  return 3 * (matmul_per_token + attention_per_token) * tokens;
}

StepProfile TransformerProfile(const TransformerShape& s, Remat remat) {
  const Widths w = WidthsOf(s);
  const double seq = static_cast<double>(s.seq_len);
  const double n = static_cast<double>(s.global_batch) * seq;  // tokens per step
  const double vocab = static_cast<double>(s.vocab);
  const double heads = static_cast<double>(s.heads);
  const Efficiency& eff = kDefaultEfficiency;

  StepProfile p;
  p.name = s.name;
  p.source = "model";
  p.unit = "tokens";
  p.units_per_step = n;
  p.global_batch = s.global_batch;
  p.model_flops = TransformerModelFlops(s);
  p.parameters = TransformerParameters(s);
  p.remat = std::string(RematName(remat));
  p.layers = static_cast<int>(s.layers);
  p.layer = AdamState(LayerParameters(w));
  p.other = AdamState(2 * vocab * w.d + w.d);
  p.max_tp = static_cast<int>(s.heads);

  const double matmul_count = remat == Remat::kFull ? 2 : 1;     // forward + recompute
  const double recompute_count = remat == Remat::kNone ? 1 : 2;  // attention, elementwise
  auto& ops = p.ops;
  // One layer: attention projections, flash attention, the MLP, norms, RoPE, residuals.
  AddWeightMatmul(ops, "qkv", n, w.d, w.q + 2 * w.kv, GemmDim::kN, true, matmul_count);
  AddWeightMatmul(ops, "attn_out", n, w.q, w.d, GemmDim::kK, true, matmul_count);
  AddWeightMatmul(ops, "mlp_in", n, w.d, (w.mlp_mats - 1) * w.f, GemmDim::kN, true, matmul_count);
  AddWeightMatmul(ops, "mlp_out", n, w.f, w.d, GemmDim::kK, true, matmul_count);
  // Causal flash attention: half the seq x seq scores; the forward runs QKᵀ and PV, the backward
  // recomputes QKᵀ and runs four more GEMMs (2.5x). K and V are streamed once per 2048-row block
  // of queries.
  const double scores = n * seq * heads / 2;
  const double kv_passes = std::max(1.0, seq / 2048);
  ProfileOp attn{.name = "attention",
                 .unit = OpUnit::kAttention,
                 .tp_split = true,
                 .per_layer = true,
                 .count = recompute_count,
                 .mxu_flops = 2 * n * seq * w.q,
                 .vpu_ops = scores * eff.softmax_ops_forward,
                 .hbm_bytes = 2 * n * (2 * w.q + 2 * w.kv * kv_passes)};
  ProfileOp attn_bwd = attn;
  attn_bwd.name = "attention.bwd";
  attn_bwd.count = 1;
  attn_bwd.mxu_flops *= 2.5;
  attn_bwd.vpu_ops = scores * eff.softmax_ops_backward;
  attn_bwd.hbm_bytes *= 2.5;
  ops.push_back(attn);
  ops.push_back(attn_bwd);
  AddVector(ops, "norm_attn", n * w.d, 1, 1, 5, false, true, recompute_count);
  AddVector(ops, "rope", n * (w.q + w.kv), 1, 1, 6, true, true, recompute_count);
  AddVector(ops, "residual_attn", n * w.d, 2, 1, 1, false, true, recompute_count);
  AddVector(ops, "norm_mlp", n * w.d, 1, 1, 5, false, true, recompute_count);
  AddVector(ops, s.gated_mlp ? "swiglu" : "gelu", n * w.f, w.mlp_mats - 1, 1, 8, true, true,
            recompute_count);
  AddVector(ops, "residual_mlp", n * w.d, 2, 1, 1, false, true, recompute_count);
  // Outside the layers: embedding lookup, final norm, logits, the loss, the optimizer update.
  AddVector(ops, "embed", n * w.d, 1, 1, 1, false, false, 1);
  AddVector(ops, "norm_final", n * w.d, 1, 1, 5, false, false, 1);
  AddWeightMatmul(ops, "logits", n, w.d, vocab, GemmDim::kN, false, 1);
  ops.push_back({.name = "loss",
                 .unit = OpUnit::kVector,
                 .tp_split = true,
                 .vpu_ops = n * vocab * 10,
                 .hbm_bytes = n * vocab * 12});  // bf16 logits in, f32 softmax, bf16 grads out
  // AdamW: read weights, gradients and both moments, write weights and moments (f32).
  ops.push_back({.name = "optimizer",
                 .unit = OpUnit::kVector,
                 .scaling = Scaling::kParameters,
                 .vpu_ops = p.parameters * 12,
                 .hbm_bytes = p.parameters * 28});

  // Activations kept for the backward pass, bytes per token and layer (bf16).
  const double keep_all_tp = 2 * (w.q + 2 * w.kv) + 2 * (w.q + w.kv) + 2 * w.q + 4 * heads +
                             2 * (w.mlp_mats - 1) * w.f + 2 * w.f;
  const double keep_all = 12 * w.d;
  double kept = 2 * w.d, kept_tp = 0;  // full: the layer input only
  if (remat == Remat::kMinimal) {
    kept = 6 * w.d;  // input, attention output projection, MLP output
    kept_tp = 2 * (w.q + 2 * w.kv) + 2 * (w.mlp_mats - 1) * w.f;
  } else if (remat == Remat::kNone) {
    kept = keep_all;
    kept_tp = keep_all_tp;
  }
  const double layers = static_cast<double>(s.layers);
  p.activation_bytes = n * (layers * kept + 4 * w.d);
  p.activation_bytes_tp = n * layers * kept_tp;
  // The layer being differentiated (its activations, recomputed or kept) and the bf16 logits
  // (the loss fusion computes the f32 softmax and its gradient from them without storing them).
  p.transient_bytes = n * keep_all;
  p.transient_bytes_tp = n * (keep_all_tp + 2 * vocab);
  // Megatron: all-reduce the attention and MLP outputs [tokens, dModel] forward and their
  // gradients backward; full remat repeats the forward pair.
  p.tp_allreduce_bytes_per_layer = 2 * n * w.d * (remat == Remat::kFull ? 6 : 4);
  return p;
}

}  // namespace tpuemu::engine::cost
