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

// Per token, the parameters a token goes through (routed experts: topK of them; the logits
// apart, since a prompt chunk computes them for its last token only) and the parameters stored,
// and per layer the widths the attention needs.
struct Sizes {
  double active = 0, logits = 0, stored = 0, q = 0, kv_per_token_elems = 0;
};

Sizes SizesOf(const TransformerShape& s) {
  const double d = static_cast<double>(s.d_model);
  const double q = static_cast<double>(s.heads * s.head_dim);
  const double kv = static_cast<double>(s.kv_heads * s.head_dim);
  const double layers = static_cast<double>(s.layers);
  Sizes z;
  z.active = ActiveLayerParameters(s);
  z.logits = d * static_cast<double>(s.vocab);  // the embedding is a lookup
  z.stored = TransformerParameters(s);
  z.q = q;
  z.kv_per_token_elems = 2 * layers * kv;  // K and V of every layer
  return z;
}

constexpr const char* kFields =
    "(engine, batch, inputLen, outputLen, cacheLen, chunkTokens, weights, kvCache, tp, "
    "shardOnBatch)";

}  // namespace

Result<ServingOptions> ParseServingOptions(const json& serving) {
  if (!serving.is_object()) return Status::InvalidArgument("serving must be an object");
  ServingOptions o;
  for (const auto& item : serving.items()) {
    const std::string& key = item.key();
    const json& v = item.value();
    if (key == "batch" || key == "inputLen" || key == "outputLen" || key == "tp" ||
        key == "cacheLen" || key == "chunkTokens") {
      const bool zero_ok =
          key == "batch" || key == "tp" || key == "cacheLen" || key == "chunkTokens";
      const int64_t lo = zero_ok ? 0 : 1;
      const int64_t hi = key == "batch" ? 1 << 20 : key == "tp" ? 16384 : 1 << 21;
      if (!v.is_number_integer() || v.get<int64_t>() < lo || v.get<int64_t>() > hi) {
        return BadServingField(
            key, "must be an integer in " + std::to_string(lo) + ".." + std::to_string(hi));
      }
      (key == "batch"         ? o.batch
       : key == "inputLen"    ? o.input_len
       : key == "tp"          ? o.tp
       : key == "cacheLen"    ? o.cache_len
       : key == "chunkTokens" ? o.chunk_tokens
                              : o.output_len) = v.get<int64_t>();
    } else if (key == "weights" || key == "kvCache") {
      Result<double> bytes = Dtype(v, key.c_str());
      if (!bytes.ok()) return bytes.status();
      (key == "weights" ? o.weight_bytes : o.kv_bytes) = *bytes;
    } else if (key == "shardOnBatch") {
      if (!v.is_boolean()) return BadServingField(key, "must be true or false");
      o.shard_on_batch = v.get<bool>();
    } else if (key == "engine") {
      Result<ServingEngine> engine =
          v.is_string() ? ParseServingEngine(v.get<std::string>()) : ParseServingEngine("");
      if (!engine.ok()) return engine.status();
      o.engine = *engine;
    } else {
      return BadServingField(key, std::string("is not a known field ") + kFields);
    }
  }
  return o;
}

json ServingOptionsToJson(const ServingOptions& o) {
  return {{"engine", ServingEngineName(o.engine)},
          {"batch", o.batch},
          {"inputLen", o.input_len},
          {"outputLen", o.output_len},
          {"cacheLen", o.cache_len},
          {"chunkTokens", o.chunk_tokens},
          {"weights", o.weight_bytes == 1 ? "int8" : "bf16"},
          {"kvCache", o.kv_bytes == 1 ? "int8" : "bf16"},
          {"tp", o.tp},
          {"shardOnBatch", o.shard_on_batch}};
}

namespace {

// One engine step on one replica: `decodes` sequences each emit a token over `context` tokens of
// KV cache, and `prefill` prompt tokens (chunks, each attending on average over half a prompt)
// run beside them.
struct StepCost {
  double hbm = 0, mxu = 0, ici = 0, host = 0;
  double Seconds() const { return std::max(hbm, mxu) + ici + host; }
  std::string Bound() const {
    const double compute = std::max(hbm, mxu);
    if (host > std::max(compute, ici)) return "host and framework";
    if (ici > compute) return "ICI";
    return hbm >= mxu ? "HBM bandwidth" : "MXU";
  }
};

// One model replica on `tp` of the slice's chips (every figure per chip of that group).
ServingEstimate EstimateReplica(const TransformerShape& s, const AcceleratorType& type, int tp,
                                const ServingOptions& o, const PriceTable& prices,
                                const Efficiency& eff) {
  const ChipSpec& spec = Spec(type.generation);
  const EngineProfile engine = ProfileOf(o.engine, eff);
  const Sizes z = SizesOf(s);
  const double chips = tp;
  ServingEstimate e;
  e.engine = ServingEngineName(o.engine);
  e.chips = type.chips;
  e.tp = tp;
  e.replicas = type.chips / tp;
  e.step_overhead_seconds = engine.step_seconds;
  e.capacity_bytes = spec.hbm_bytes * eff.usable_hbm;
  e.weights_bytes_per_chip = z.stored * o.weight_bytes / chips;
  e.kv_bytes_per_token = z.kv_per_token_elems * o.kv_bytes;
  // KV heads split over the chips up to their number; beyond, each is held by several chips.
  const double kv_shards = std::min(chips, static_cast<double>(s.kv_heads));
  const double kv_per_token_chip = e.kv_bytes_per_token / kv_shards;
  const double prompt = static_cast<double>(o.input_len);
  const double out = static_cast<double>(o.output_len);
  const double mean_context = prompt + out / 2;
  // A static cache holds and reads every slot over its allocated length (a rolling window when
  // shorter than the sequence); a paged one the tokens there are.
  const double read_context =
      engine.static_kv_cache ? static_cast<double>(o.CacheLen()) : mean_context;
  const double slot_bytes = read_context * kv_per_token_chip;
  const double chunk = static_cast<double>(o.ChunkTokens());
  // One prefill in flight (a chunk of it with chunked prefill): layer activations, f32 logits.
  const double prefill_tokens = engine.chunked_prefill ? std::min(prompt, chunk) : prompt;
  const double working =
      prefill_tokens *
      (12 * static_cast<double>(s.d_model) * 2 + 4 * static_cast<double>(s.vocab)) / chips;
  const double free_bytes = e.capacity_bytes - e.weights_bytes_per_chip - working;
  e.max_batch = free_bytes > 0 ? static_cast<int64_t>(std::floor(free_bytes / slot_bytes)) : 0;
  e.batch = o.batch > 0 ? o.batch : e.max_batch;
  if (e.max_batch < 1) {
    e.problem = "does not fit: weights need " + Gib(e.weights_bytes_per_chip) +
                " per chip and one sequence of KV cache " + Gib(slot_bytes) + ", " +
                Gib(e.capacity_bytes) + " usable";
    return e;
  }
  // vLLM admits only the sequences its KV blocks can hold (--max-num-seqs is a cap); a static
  // engine allocates every slot up front, so too many slots do not fit.
  if (engine.chunked_prefill) e.batch = std::min(e.batch, e.max_batch);
  e.fits = e.batch <= e.max_batch;
  if (!e.fits) {
    e.problem = "batch too large: " + std::to_string(e.batch) + " slots of KV cache need " +
                Gib(static_cast<double>(e.batch) * slot_bytes) + " per chip beside " +
                Gib(e.weights_bytes_per_chip) + " of weights; at most " +
                std::to_string(e.max_batch) + " fit";
  }
  e.kv_bytes_per_chip = static_cast<double>(e.batch) * slot_bytes;

  Result<SliceMesh> mesh = MeshFor(type, tp);
  const double layers = static_cast<double>(s.layers);
  const auto all_reduces = [&](double tokens) {  // attention and MLP outputs, every layer
    if (!mesh.ok() || tp == 1) return 0.0;
    return 2 * layers *
           AllReduceSeconds(spec, mesh->tp, tokens * static_cast<double>(s.d_model) * 2, eff);
  };
  const double mxu_rate = spec.PeakBf16Flops() * eff.mxu * chips;
  const double hbm_rate = spec.hbm_bandwidth_bytes_per_s *
                          (o.weight_bytes < 2 ? engine.hbm_efficiency_int8 : engine.hbm_efficiency);
  // Sampling: each sequence's f32 logits over the vocabulary are written and read back.
  const double sampling_bytes = 2 * 4 * static_cast<double>(s.vocab) / chips;
  const auto step = [&](double decodes, double context, double prefill) {
    StepCost c;
    const double flops = 2 * (z.active + z.logits) * decodes + 2 * z.active * prefill +
                         4 * decodes * context * z.q * layers +
                         4 * prefill * (prompt / 2) * z.q * layers;
    const double bytes =
        e.weights_bytes_per_chip + decodes * context * kv_per_token_chip +
        // a prompt being chunked reads its prefix (half a prompt on
        // average) each step and writes the chunk's keys and values
        (std::max(prefill / prompt, prefill > 0 ? 1.0 : 0.0) * prompt / 2 + prefill) *
            kv_per_token_chip +
        decodes * sampling_bytes;
    c.hbm = bytes / hbm_rate;
    c.mxu = flops / mxu_rate;
    c.ici = all_reduces(decodes + prefill);
    // One engine over the slice (shardOnBatch) hands every replica's tokens to the host.
    c.host = engine.step_seconds +
             engine.sequence_step_seconds * decodes * (o.shard_on_batch ? e.replicas : 1);
    return c;
  };

  // Time to first token of one prompt alone: one call, or its chunks one step each.
  const double calls = engine.chunked_prefill ? std::ceil(prompt / chunk) : 1;
  const double prefill_flops =
      2 * z.active * prompt + 2 * z.logits + 2 * prompt * prompt * z.q * layers;
  e.prefill_seconds =
      std::max(prefill_flops / mxu_rate, calls * e.weights_bytes_per_chip / hbm_rate) +
      all_reduces(prompt) + calls * engine.step_seconds;
  e.prefill_tokens_per_second_per_chip = prompt / e.prefill_seconds / chips;

  const double batch = static_cast<double>(e.batch);
  const StepCost decode_only = step(batch, read_context, 0);
  e.decode_tokens_per_second_per_chip = batch / decode_only.Seconds() / chips;
  if (engine.chunked_prefill) {
    // Steady state: per step, `running` next tokens and prompt chunks in the ratio in : out, the
    // step's token budget shared between them.
    const double running = std::min(batch, chunk * out / (prompt + out));
    const StepCost mixed = step(running, mean_context, running * prompt / out);
    e.decode_step_seconds = mixed.Seconds();
    e.decode_bound = mixed.Bound();
    e.output_tokens_per_second_per_chip = running / e.decode_step_seconds / chips;
  } else {
    e.decode_step_seconds = decode_only.Seconds();
    e.decode_bound = decode_only.Bound();
    // One engine over the slice: every replica's slots wait for the same prefill calls.
    const double engines_prefilling = o.shard_on_batch ? e.replicas : 1;
    const double generation =
        engines_prefilling * batch * e.prefill_seconds + out * e.decode_step_seconds;
    e.output_tokens_per_second_per_chip = batch * out / generation / chips;
  }

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
