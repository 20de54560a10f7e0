// Which TPU to SERVE a model on: prefill and decode throughput, latency, KV-cache memory, the
// largest batch that fits and the dollars per million output tokens of one transformer
// (transformer_model.h) on one accelerator type, as a serving engine runs it (serving_engine.h:
// jetstream, vllm or ideal). The model (docs/cost-model.md, "Serving"), every time from the chip
// model (engine/chip/chip_model.h: MXU at Efficiency::mxu, HBM, ICI all-reduces):
//
//  * Sharding: each model replica is split over `tp` chips by tensor parallelism, as JetStream's
//    MaxText engine (ici_tensor_parallelism) and vLLM TPU (--tensor-parallel-size) serve it, and
//    the slice runs chips/tp replicas. tp 0 picks the group size that fits with the most output
//    tokens per chip (the cheapest per token). Weights divide over the group; the KV cache over
//    min(tp, kvHeads) (KV heads are replicated beyond that). Each layer all-reduces its attention
//    and MLP outputs over the group (ici.h). Figures are per chip, and batch is per replica.
//  * Memory per chip: weights (bf16, or int8) plus the KV cache (bf16 or int8) — a static engine
//    holds `batch` slots of cacheLen tokens, a paged one the sequences' mean context — plus one
//    prefill's activations, against Efficiency::usable_hbm of HBM. The largest batch is what
//    that leaves.
//  * A decode step reads the weights, the KV cache (static: every slot over cacheLen; paged: the
//    mean context inputLen + outputLen/2) and writes and reads the f32 logits over the vocabulary
//    for sampling, against its FLOPs (2 per active parameter per token, attention over the cache
//    read); plus the all-reduces and the engine's host/framework time per step.
//  * Throughput with continuous batching: jetstream interleaves one prefill per finished slot with
//    decode steps of the whole batch: output tokens/s = batch·outputLen / (batch·prefill +
//    outputLen·step). vllm and ideal run steps of at most chunkTokens tokens: the running
//    sequences' next tokens and prompt chunks in the ratio inputLen : outputLen of the steady
//    state, so output tokens/s = running sequences / mixed step time.
//  * Mixture of experts: weights count every expert, FLOPs the routed ones; decode reads every
//    expert's weights (a batch of slots routes to all of them).
// Serving needs only the model's shape: seqLen and globalBatch are the training step's.
// Pure function of its arguments: thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "engine/chip/efficiency.h"
#include "engine/cost/price_table.h"
#include "engine/cost/serving_engine.h"
#include "engine/cost/transformer_model.h"
#include "engine/hardware/hardware.h"

namespace tpuemu::engine::cost {

// JSON (the "serving" object of a comparison request):
//   {"engine": "jetstream"|"vllm"|"ideal", "batch": 96, "inputLen": 1024, "outputLen": 1024,
//    "cacheLen": 2048, "chunkTokens": 2048, "weights": "bf16"|"int8", "kvCache": "bf16"|"int8",
//    "tp": 8, "shardOnBatch": false}
// batch 0 or absent: the largest batch that fits (vllm: --max-num-seqs); tp 0 or absent: the best
// group size; cacheLen 0 or absent: inputLen + outputLen (jetstream's --max_cache_length; shorter
// is a rolling window); chunkTokens 0 or absent: 2048 (vllm's --max-num-batched-tokens). Errors:
// INVALID_ARGUMENT naming the field.
struct ServingOptions {
  ServingEngine engine = ServingEngine::kJetStream;
  int64_t batch = 0;  // concurrent sequences per replica
  int64_t tp = 0;     // chips per replica
  int64_t input_len = 1024, output_len = 1024;
  int64_t cache_len = 0;     // static KV cache length per slot; 0 = input_len + output_len
  int64_t chunk_tokens = 0;  // tokens per engine step with chunked prefill; 0 = 2048
  double weight_bytes = 2, kv_bytes = 2;  // per element
  // jetstream with tp below the slice: one engine over the whole slice with the batch sharded
  // over the replicas (jetstream-pytorch's --shard_on_batch), so its prefills, one prompt per
  // call, take turns across the slice; false: an engine per replica.
  bool shard_on_batch = false;

  int64_t CacheLen() const { return cache_len > 0 ? cache_len : input_len + output_len; }
  int64_t ChunkTokens() const { return chunk_tokens > 0 ? chunk_tokens : 2048; }
};
Result<ServingOptions> ParseServingOptions(const nlohmann::json& serving);
nlohmann::json ServingOptionsToJson(const ServingOptions& options);

struct ServingEstimate {
  bool fits = false;
  std::string problem;  // why not: the weights alone, or not one slot
  std::string engine;   // ServingEngineName
  int chips = 0;
  int tp = 0, replicas = 0;          // chips per model replica, replicas on the slice
  int64_t batch = 0, max_batch = 0;  // per replica
  double weights_bytes_per_chip = 0, kv_bytes_per_chip = 0, capacity_bytes = 0;
  double kv_bytes_per_token = 0;     // the whole model's, before sharding
  double prefill_seconds = 0;        // one prompt: time to first token without queueing
  double decode_step_seconds = 0;    // one engine step in steady state: time per output token
  double step_overhead_seconds = 0;  // the engine's host/framework time in each step
  double prefill_tokens_per_second_per_chip = 0;
  double decode_tokens_per_second_per_chip = 0;  // decode alone: batch / step / chips
  double output_tokens_per_second_per_chip = 0;  // steady state, prefills interleaved
  std::string decode_bound;  // "HBM bandwidth" | "MXU" | "ICI" | "host and framework"
  double usd_per_million_output_tokens_on_demand = 0, usd_per_million_output_tokens_spot = 0;
};

ServingEstimate EstimateServing(const TransformerShape& shape, const AcceleratorType& type,
                                const ServingOptions& options, const PriceTable& prices,
                                const Efficiency& eff = kDefaultEfficiency);

}  // namespace tpuemu::engine::cost
