#include "engine/cost/transformer_model.h"

#include <algorithm>
#include <array>
#include <initializer_list>

#include "engine/chip/efficiency.h"

namespace tpuemu::engine::cost {
namespace {

// Per token and layer, in elements, the widths the cost model needs.
struct Widths {
  double d, q, kv, f;  // dModel, heads·headDim, kvHeads·headDim, ffn
  double mlp_mats;     // 3 gated, 2 not
  // MLPs per layer: stored (every expert and shared expert; 1 dense), run per token for the
  // model FLOPs (topK + shared), run per token by the hardware (with the capacity's padding).
  double mlps_stored = 1, mlps_per_token = 1, mlps_computed = 1;
  double experts = 0;  // the gate's width; 0 when dense
};

Widths WidthsOf(const TransformerShape& s) {
  Widths w{static_cast<double>(s.d_model), static_cast<double>(s.heads * s.head_dim),
           static_cast<double>(s.kv_heads * s.head_dim), static_cast<double>(s.ffn),
           s.gated_mlp ? 3.0 : 2.0};
  if (s.Moe()) {
    const double shared = static_cast<double>(s.shared_experts);
    const double routed = static_cast<double>(s.top_k);
    w.experts = static_cast<double>(s.experts);
    w.mlps_stored = w.experts + shared;
    w.mlps_per_token = routed + shared;
    w.mlps_computed = routed * (s.capacity_factor > 0 ? s.capacity_factor : 1.0) + shared;
  }
  return w;
}

double AttentionParameters(const Widths& w) {
  return w.d * (w.q + 2 * w.kv) + w.q * w.d + 2 * w.d;  // projections and the two norms
}
double MlpParameters(const Widths& w) { return w.mlp_mats * w.d * w.f; }
double LayerParameters(const Widths& w) {
  return AttentionParameters(w) + w.mlps_stored * MlpParameters(w) + w.d * w.experts;
}

StateBytes AdamState(double params) {
  // f32 master weights and gradients, Adam's two f32 moments, bf16 copies for the all-gather.
  return {params * 4, params * 4, params * 8, params * 2};
}

// A weight matmul x[tokens, k] · W[k, n] and its two backward GEMMs. `tp_dim` is the dimension
// of the FORWARD GEMM tensor parallelism splits (kN: column-parallel, kK: row-parallel).
// `groups` > 1: that many independent GEMMs of `tokens` rows each (one per expert).
void AddWeightMatmul(std::vector<ProfileOp>& ops, const std::string& name, double tokens, double k,
                     double n, GemmDim tp_dim, bool per_layer, double forward_count,
                     double groups = 1) {
  const auto i64 = [](double v) { return static_cast<int64_t>(std::max(1.0, v)); };
  const double flops = 2 * groups * tokens * k * n;
  // bf16 operands and result
  const double bytes = 2 * groups * (tokens * k + k * n + tokens * n);
  ProfileOp fwd{.name = name,
                .unit = OpUnit::kMxu,
                .tp_split = tp_dim != GemmDim::kNone,
                .per_layer = per_layer,
                .count = forward_count,
                .mxu_flops = flops,
                .hbm_bytes = bytes,
                .gemm_batch = i64(groups),
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

double TransformerParameters(const TransformerShape& s) {
  const Widths w = WidthsOf(s);
  // The embedding and the logits matrix, or one matrix for both (tied), plus the final norm.
  const double vocab_matrices = s.tied_embeddings ? 1 : 2;
  return static_cast<double>(s.layers) * LayerParameters(w) +
         vocab_matrices * static_cast<double>(s.vocab) * w.d + w.d;
}

double ActiveLayerParameters(const TransformerShape& s) {
  const Widths w = WidthsOf(s);
  return static_cast<double>(s.layers) *
         (w.d * (w.q + 2 * w.kv) + w.q * w.d + w.mlp_mats * w.d * w.f * w.mlps_per_token +
          w.d * w.experts);
}

double TransformerModelFlops(const TransformerShape& s) {
  const Widths w = WidthsOf(s);
  // MaxText counts the topK routed experts (and the shared ones) and the gate, not the padding.
  const double matmul_per_token =
      static_cast<double>(s.layers) *
          (2 * w.d * w.f * w.mlp_mats * w.mlps_per_token + 2 * w.d * w.experts +
           2 * w.d * (w.q + 2 * w.kv) + 2 * w.q * w.d) +
      2 * w.d * static_cast<double>(s.vocab);
  const double attention_per_token =
      static_cast<double>(s.layers) * 4 * static_cast<double>(s.seq_len) * w.q;
  const double tokens = static_cast<double>(s.global_batch) * static_cast<double>(s.seq_len);
  return 3 * (matmul_per_token + attention_per_token) * tokens;
}

StepProfile TransformerProfile(const TransformerShape& s, const Remat& remat,
                               const Efficiency& eff) {
  const Widths w = WidthsOf(s);
  const double seq = static_cast<double>(s.seq_len);
  const double n = static_cast<double>(s.global_batch) * seq;  // tokens per step
  const double vocab = static_cast<double>(s.vocab);
  const double heads = static_cast<double>(s.heads);

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
  const double routed_params = s.Moe() ? w.experts * MlpParameters(w) : 0;
  p.layer = AdamState(LayerParameters(w) - routed_params);
  p.experts = AdamState(routed_params);
  p.other = AdamState(2 * vocab * w.d + w.d);
  p.max_tp = static_cast<int>(s.heads);
  p.max_ep = s.Moe() ? static_cast<int>(s.experts) : 1;
  p.max_cp = s.seq_len;
  p.cp_allgather_bytes_per_layer = n * 2 * w.kv * 2;

  // A weight matmul whose output the policy neither keeps nor offloads runs again in the
  // backward pass; attention and the elementwise ops are recomputed unless everything is kept.
  const auto count = [&](std::initializer_list<Placement> outputs) {
    if (remat.keep_everything) return 1.0;
    for (Placement o : outputs) {
      if (o == Placement::kRecompute) return 2.0;
    }
    return 1.0;
  };
  const double qkv_count = count({remat.query, remat.key, remat.value});
  const double out_count = count({remat.out_proj});
  const double mlp_in_count = count({remat.mlp_in}), mlp_out_count = count({remat.mlp_out});
  const double recompute_count = remat.keep_everything ? 1 : 2;  // attention, elementwise
  auto& ops = p.ops;
  // One layer: attention projections, flash attention, the MLP, norms, RoPE, residuals.
  AddWeightMatmul(ops, "qkv", n, w.d, w.q + 2 * w.kv, GemmDim::kN, true, qkv_count);
  AddWeightMatmul(ops, "attn_out", n, w.q, w.d, GemmDim::kK, true, out_count);
  const double shared_mlps = s.Moe() ? static_cast<double>(s.shared_experts) : 1;
  if (shared_mlps > 0) {  // the dense MLP, or the shared experts (as one wider MLP)
    AddWeightMatmul(ops, "mlp_in", n, w.d, (w.mlp_mats - 1) * w.f * shared_mlps, GemmDim::kN, true,
                    mlp_in_count);
    AddWeightMatmul(ops, "mlp_out", n, w.f * shared_mlps, w.d, GemmDim::kK, true, mlp_out_count);
  }
  if (s.Moe()) {
    // Routed experts: each expert's GEMMs over its rows (capacity, padding included).
    const double routed =
        static_cast<double>(s.top_k) * (s.capacity_factor > 0 ? s.capacity_factor : 1.0);
    const double rows = n * routed / w.experts;
    AddWeightMatmul(ops, "gate", n, w.d, w.experts, GemmDim::kNone, true, mlp_in_count);
    AddWeightMatmul(ops, "experts_in", rows, w.d, (w.mlp_mats - 1) * w.f, GemmDim::kN, true,
                    mlp_in_count, w.experts);
    AddWeightMatmul(ops, "experts_out", rows, w.f, w.d, GemmDim::kK, true, mlp_out_count,
                    w.experts);
    if (s.capacity_factor > 0) {
      // MaxText's dropping path routes with one-hot einsums against the [tokens, experts,
      // capacity] dispatch and combine masks (capacity per sequence): MXU work of
      // 2·seqLen·topK·capacityFactor·dModel per token for each, forward and backward.
      for (const char* name : {"moe_dispatch", "moe_combine"}) {
        const double k = seq * routed;
        ProfileOp op{
            .name = name,
            .unit = OpUnit::kMxu,
            .per_layer = true,
            .count = mlp_in_count + 1,  // forward (and recompute), backward
            .mxu_flops = 2 * n * k * w.d,
            .hbm_bytes = 2 * (n * w.d + rows * w.experts * w.d),
            .gemm = {static_cast<int64_t>(n), static_cast<int64_t>(w.d), static_cast<int64_t>(k)},
            .batch_dim = GemmDim::kM};
        ops.push_back(std::move(op));
      }
    }
    // Dispatch and combine move each routed row to its expert's chips and back: forward,
    // backward, and again when the MLP is recomputed.
    p.all_to_all_bytes_per_layer = 2 * (1 + mlp_in_count) * rows * w.experts * w.d * 2;
  }
  // Causal flash attention: half the seq x seq scores; the forward runs QKᵀ and PV, the backward
  // recomputes QKᵀ and runs four more GEMMs (2.5x). K and V are streamed once per 2048-row block
  // of queries.
  // Every one of its GEMMs has the head width as one dimension (QKᵀ and dO·Vᵀ contract over it,
  // PV, dS·K, dSᵀ·Q and Pᵀ·dO produce it), so the MXU time is that of QKᵀ per head —
  // [tokens, headDim]·[headDim, seqLen/2] — scaled to the FLOPs: on v6e's 256x256 arrays a
  // 128-wide head fills half of each fold (timing.h: a partial fold costs a full one).
  const double scores = n * seq * heads / 2;
  const double kv_passes = std::max(1.0, seq / 2048);
  const auto i64 = [](double v) { return static_cast<int64_t>(std::max(1.0, v)); };
  ProfileOp attn{.name = "attention",
                 .unit = OpUnit::kAttention,
                 .tp_split = true,
                 .per_layer = true,
                 .count = recompute_count,
                 .mxu_flops = 2 * n * seq * w.q,
                 .vpu_ops = scores * eff.softmax_ops_forward,
                 .hbm_bytes = 2 * n * (2 * w.q + 2 * w.kv * kv_passes),
                 .gemm_batch = static_cast<int64_t>(s.heads),
                 .gemm = {i64(n), i64(seq / 2), static_cast<int64_t>(s.head_dim)},
                 .batch_dim = GemmDim::kM,
                 .tp_dim = GemmDim::kBatch};
  ProfileOp attn_bwd = attn;
  attn_bwd.name = "attention.bwd";
  attn_bwd.count = 1;
  attn_bwd.mxu_flops *= 2.5;
  attn_bwd.vpu_ops = scores * eff.softmax_ops_backward;
  attn_bwd.hbm_bytes *= 2.5;
  ops.push_back(attn);
  ops.push_back(attn_bwd);
  const double mlp_elements = n * w.f * w.mlps_computed;
  AddVector(ops, "norm_attn", n * w.d, 1, 1, 5, false, true, recompute_count);
  AddVector(ops, "rope", n * (w.q + w.kv), 1, 1, 6, true, true, recompute_count);
  AddVector(ops, "residual_attn", n * w.d, 2, 1, 1, false, true, recompute_count);
  AddVector(ops, "norm_mlp", n * w.d, 1, 1, 5, false, true, recompute_count);
  AddVector(ops, s.gated_mlp ? "swiglu" : "gelu", mlp_elements, w.mlp_mats - 1, 1, 8, true, true,
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

  // Activations kept for the backward pass, bytes per token and layer (bf16): each named tensor
  // where the policy puts it; tensors split by tensor parallelism apart.
  const double mlp_in_width = (w.mlp_mats - 1) * w.f * w.mlps_computed;
  const double keep_all_tp = 2 * (w.q + 2 * w.kv) + 2 * (w.q + w.kv) + 2 * w.q + 4 * heads +
                             2 * mlp_in_width + 2 * w.f * w.mlps_computed;
  const double keep_all = 12 * w.d;
  double device = 0, device_tp = 0, host = 0, host_tp = 0;
  const auto place = [&](Placement where, double bytes, bool tp_split) {
    if (where == Placement::kDevice) (tp_split ? device_tp : device) += bytes;
    if (where == Placement::kOffload) (tp_split ? host_tp : host) += bytes;
  };
  if (remat.keep_everything) {
    device = keep_all;
    device_tp = keep_all_tp;
  } else {
    place(remat.layer_input, 2 * w.d, false);
    place(remat.query, 2 * w.q, true);
    place(remat.key, 2 * w.kv, true);
    place(remat.value, 2 * w.kv, true);
    place(remat.out_proj, 2 * w.d, false);
    place(remat.mlp_in, 2 * mlp_in_width, true);
    place(remat.mlp_out, 2 * w.d, false);
  }
  // MaxText shards every activation over the tensor-parallel axis (base.yml's
  // logical_axis_rules: activation_embed, activation_mlp, activation_heads -> tensor), so all of
  // it divides over tp.
  const double layers = static_cast<double>(s.layers);
  p.activation_bytes = 0;
  p.activation_bytes_tp = n * (layers * (device + device_tp) + 4 * w.d);
  p.host_offload_bytes_per_layer = 0;
  p.host_offload_bytes_per_layer_tp = n * (host + host_tp);
  // What XLA could recompute if the kept activations overflow: all but the layer inputs, by
  // re-running the matmuls whose outputs they are.
  const double kept_inputs = remat.layer_input == Placement::kDevice ? 2 * w.d : 0;
  p.reducible_activation_bytes_tp = n * layers * std::max(0.0, device + device_tp - kept_inputs);
  for (const ProfileOp& op : ops) {
    if (op.per_layer && op.unit == OpUnit::kMxu && op.count == 1 &&
        op.name.find('.') == std::string::npos) {
      p.reducible_flops_per_layer += op.mxu_flops;  // a forward matmul whose output is kept
    }
  }
  // The peak working set on top: the layer being differentiated (its activations, recomputed
  // or kept, and when offloading two layers' offloaded tensors in flight: one copying, one being
  // produced), or — earlier in the backward pass, never at the same time — the bf16 logits and
  // their gradient (the loss fusion computes the f32 softmax from them without storing it).
  const double layer_working = keep_all + keep_all_tp + 2 * (host + host_tp);
  const double logits_working = 4 * vocab;
  p.transient_bytes = 0;
  p.transient_bytes_tp = n * std::max(layer_working, logits_working);
  // Megatron: all-reduce the attention and MLP outputs [tokens, dModel] forward and their
  // gradients backward; recomputing a block's output projection repeats its forward one.
  p.tp_allreduce_bytes_per_layer = 2 * n * w.d * (2 + out_count + mlp_out_count);
  return p;
}

}  // namespace tpuemu::engine::cost
