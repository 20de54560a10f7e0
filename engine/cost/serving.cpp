#include "engine/cost/serving.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

#include "engine/chip/ici.h"
#include "engine/cost/number_text.h"

namespace tpuemu::engine::cost {
namespace {

using nlohmann::json;

Status BadServingField(const std::string& field, const std::string& what) {
  return Status::InvalidArgument("serving." + field + " " + what);
}

Result<double> Dtype(const json& v, const char* field) {
  if (v == "bf16") return 2.0;
  if (v == "int8") return 1.0;
  return BadServingField(field, "must be \"bf16\" or \"int8\"");
}

// Per token, the parameters a token goes through (routed experts: topK of them) and the
// parameters stored, and per layer the widths the attention needs.
struct Sizes {
  double active = 0, stored = 0, q = 0, kv_per_token_elems = 0;
};

Sizes SizesOf(const TransformerShape& s) {
  const double d = static_cast<double>(s.d_model), f = static_cast<double>(s.ffn);
  const double q = static_cast<double>(s.heads * s.head_dim);
  const double kv = static_cast<double>(s.kv_heads * s.head_dim);
  const double mats = s.gated_mlp ? 3 : 2;
  const double mlps = s.Moe() ? static_cast<double>(s.top_k + s.shared_experts) : 1;
  const double gate = s.Moe() ? d * static_cast<double>(s.experts) : 0;
  const double layers = static_cast<double>(s.layers);
  Sizes z;
  z.active = layers * (d * (q + 2 * kv) + q * d + mats * d * f * mlps + gate) +
             d * static_cast<double>(s.vocab);  // the logits; the embedding is a lookup
  z.stored = TransformerParameters(s);
  z.q = q;
  z.kv_per_token_elems = 2 * layers * kv;  // K and V of every layer
  return z;
}

}  // namespace

Result<ServingOptions> ParseServingOptions(const json& serving) {
  if (!serving.is_object()) return Status::InvalidArgument("serving must be an object");
  ServingOptions o;
  for (const auto& item : serving.items()) {
    const std::string& key = item.key();
    const json& v = item.value();
    if (key == "batch" || key == "inputLen" || key == "outputLen" || key == "tp") {
      const int64_t lo = key == "batch" || key == "tp" ? 0 : 1;
      const int64_t hi = key == "batch" ? 1 << 20 : key == "tp" ? 16384 : 1 << 21;
      if (!v.is_number_integer() || v.get<int64_t>() < lo || v.get<int64_t>() > hi) {
        return BadServingField(
            key, "must be an integer in " + std::to_string(lo) + ".." + std::to_string(hi));
      }
      (key == "batch"      ? o.batch
       : key == "inputLen" ? o.input_len
       : key == "tp"       ? o.tp
                           : o.output_len) = v.get<int64_t>();
    } else if (key == "weights" || key == "kvCache") {
      Result<double> bytes = Dtype(v, key.c_str());
      if (!bytes.ok()) return bytes.status();
      (key == "weights" ? o.weight_bytes : o.kv_bytes) = *bytes;
    } else {
      return BadServingField(
          key, "is not a known field (batch, inputLen, outputLen, weights, kvCache, tp)");
    }
  }
  return o;
}

json ServingOptionsToJson(const ServingOptions& o) {
  return {{"batch", o.batch},
          {"inputLen", o.input_len},
          {"outputLen", o.output_len},
          {"weights", o.weight_bytes == 1 ? "int8" : "bf16"},
          {"kvCache", o.kv_bytes == 1 ? "int8" : "bf16"},
          {"tp", o.tp}};
}

namespace {

// One model replica on `tp` of the slice's chips (every figure per chip of that group).
ServingEstimate EstimateReplica(const TransformerShape& s, const AcceleratorType& type, int tp,
                                const ServingOptions& o, const PriceTable& prices,
                                const Efficiency& eff) {
  const ChipSpec& spec = Spec(type.generation);
  const Sizes z = SizesOf(s);
  const double chips = tp;
  ServingEstimate e;
  e.chips = type.chips;
  e.tp = tp;
  e.replicas = type.chips / tp;
  e.capacity_bytes = spec.hbm_bytes * eff.usable_hbm;
  e.weights_bytes_per_chip = z.stored * o.weight_bytes / chips;
  e.kv_bytes_per_token = z.kv_per_token_elems * o.kv_bytes;
  // KV heads split over the chips up to their number; beyond, each is held by several chips.
  const double kv_shards = std::min(chips, static_cast<double>(s.kv_heads));
  const double slot_tokens = static_cast<double>(o.input_len + o.output_len);
  const double slot_bytes = slot_tokens * e.kv_bytes_per_token / kv_shards;
  const double prompt = static_cast<double>(o.input_len);
  // One prefill in flight: its layer activations and its f32 logits.
  const double working =
      prompt * (12 * static_cast<double>(s.d_model) * 2 + 4 * static_cast<double>(s.vocab)) / chips;
  const double free_bytes = e.capacity_bytes - e.weights_bytes_per_chip - working;
  e.max_batch = free_bytes > 0 ? static_cast<int64_t>(std::floor(free_bytes / slot_bytes)) : 0;
  e.batch = o.batch > 0 ? o.batch : e.max_batch;
  if (e.max_batch < 1) {
    e.problem = "does not fit: weights need " + Gib(e.weights_bytes_per_chip) +
                " per chip and one slot of KV cache " + Gib(slot_bytes) + ", " +
                Gib(e.capacity_bytes) + " usable";
    return e;
  }
  e.fits = e.batch <= e.max_batch;
  if (!e.fits) {
    e.problem = "batch too large: " + std::to_string(e.batch) + " slots of KV cache need " +
                Gib(static_cast<double>(e.batch) * slot_bytes) + " per chip beside " +
                Gib(e.weights_bytes_per_chip) + " of weights; at most " +
                std::to_string(e.max_batch) + " fit";
  }
  e.kv_bytes_per_chip = static_cast<double>(e.batch) * slot_bytes;

  Result<SliceMesh> mesh = MeshFor(type, tp);
  const auto all_reduces = [&](double tokens) {  // attention and MLP outputs, every layer
    if (!mesh.ok() || tp == 1) return 0.0;
    return 2 * static_cast<double>(s.layers) *
           AllReduceSeconds(spec, mesh->tp, tokens * static_cast<double>(s.d_model) * 2, eff);
  };
  const double mxu_rate = spec.PeakBf16Flops() * eff.mxu * chips;
  const double layers = static_cast<double>(s.layers);

  // Prefill: compute-bound for any real prompt; causal attention is half of QKᵀ and PV.
  const double prefill_flops = 2 * z.active * prompt + 2 * prompt * prompt * z.q * layers;
  const double hbm_rate = spec.hbm_bandwidth_bytes_per_s *
                          (o.weight_bytes < 2 ? eff.serving_hbm_int8 : eff.serving_hbm);
  const double prefill_hbm = e.weights_bytes_per_chip / hbm_rate;
  e.prefill_seconds = std::max(prefill_flops / mxu_rate, prefill_hbm) + all_reduces(prompt);
  e.prefill_tokens_per_second_per_chip = prompt / e.prefill_seconds / chips;

  // Decode: one token per slot against every slot's cache at the mean context.
  const double batch = static_cast<double>(e.batch);
  const double context = prompt + static_cast<double>(o.output_len) / 2;
  const double decode_flops = 2 * z.active * batch + 4 * batch * context * z.q * layers;
  const double decode_bytes =
      e.weights_bytes_per_chip + batch * context * e.kv_bytes_per_token / kv_shards;
  const double hbm = decode_bytes / hbm_rate;
  const double mxu = decode_flops / mxu_rate;
  const double ici = all_reduces(batch);
  e.decode_step_seconds = std::max(hbm, mxu) + ici;
  e.decode_bound = ici > std::max(hbm, mxu) ? "ICI" : hbm >= mxu ? "HBM bandwidth" : "MXU";
  e.decode_tokens_per_second_per_chip = batch / e.decode_step_seconds / chips;
  const double out = static_cast<double>(o.output_len);
  const double generation = batch * e.prefill_seconds + out * e.decode_step_seconds;
  e.output_tokens_per_second_per_chip = batch * out / generation / chips;

  const ChipPrice& price = prices.Of(type.generation);
  const double tokens_per_hour = e.output_tokens_per_second_per_chip * 3600;  // per chip
  e.usd_per_million_output_tokens_on_demand =
      price.on_demand_usd_per_chip_hour / tokens_per_hour * 1e6;
  e.usd_per_million_output_tokens_spot = price.spot_usd_per_chip_hour / tokens_per_hour * 1e6;
  return e;
}

}  // namespace

ServingEstimate EstimateServing(const TransformerShape& s, const AcceleratorType& type,
                                const ServingOptions& o, const PriceTable& prices,
                                const Efficiency& eff) {
  if (o.tp > 0) {
    if (type.chips % o.tp != 0 || !MeshFor(type, static_cast<int>(o.tp)).ok()) {
      ServingEstimate e;
      e.chips = type.chips;
      e.tp = static_cast<int>(o.tp);
      e.problem = "serving.tp " + std::to_string(o.tp) + " does not fit the " +
                  std::to_string(type.chips) + " chips of " + type.name;
      return e;
    }
    return EstimateReplica(s, type, static_cast<int>(o.tp), o, prices, eff);
  }
  // The group size a serving engineer would pick: the one that fits with the most output tokens
  // per chip (so the cheapest per token); the slice runs chips/tp replicas of it.
  std::optional<ServingEstimate> best;
  for (int tp = 1; tp <= type.chips; tp *= 2) {
    if (type.chips % tp != 0 || !MeshFor(type, tp).ok()) continue;
    ServingEstimate e = EstimateReplica(s, type, tp, o, prices, eff);
    const auto rank = [](const ServingEstimate& x) {
      return std::pair{
          x.fits, x.fits ? x.output_tokens_per_second_per_chip : static_cast<double>(x.max_batch)};
    };
    if (!best || rank(e) > rank(*best)) best = std::move(e);
  }
  return best ? *best : EstimateReplica(s, type, type.chips, o, prices, eff);
}

}  // namespace tpuemu::engine::cost
