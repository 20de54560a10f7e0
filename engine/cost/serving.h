// Which TPU to SERVE a model on: prefill and decode throughput, latency, KV-cache memory, the
// largest batch that fits and the dollars per million output tokens of one transformer
// (transformer_model.h) on one accelerator type. The model (docs/cost-model.md, "Serving"):
//
//  * Sharding: each model replica is split over `tp` chips by tensor parallelism, as JetStream's
//    MaxText engine (ici_tensor_parallelism) and vLLM TPU (--tensor-parallel-size) serve it, and
//    the slice runs chips/tp replicas. tp 0 picks the group size that fits with the most output
//    tokens per chip (the cheapest per token); the published runs use every chip. Weights divide
//    over the group; the KV cache over min(tp, kvHeads) (KV heads are replicated beyond that).
//    Each layer all-reduces its attention and MLP outputs over the group (ici.h). Figures are
//    per chip, and batch is per replica.
//  * Memory per chip: weights (bf16, or int8 as the published int8 runs quantise them) plus
//    `batch` slots of KV cache of inputLen + outputLen tokens each (JetStream and vLLM reserve a
//    slot's whole length) plus one prefill's activations, against Efficiency::usable_hbm of HBM.
//    The largest batch is what that leaves for slots.
//  * Prefill of one prompt of inputLen tokens: a roofline of its FLOPs (2 per active parameter
//    per token, causal attention) on the MXUs at Efficiency::mxu, against reading the weights
//    once; plus the all-reduces. This is the time to first token with no queue.
//  * Decode step of the whole batch: a roofline of reading the weights and every slot's KV cache
//    at the mean context (inputLen + outputLen/2) at Efficiency::serving_hbm of the bandwidth
//    (serving_hbm_int8 with int8 weights), against its FLOPs; plus the all-reduces. This is the
//    time per output token.
//  * Steady-state throughput with continuous batching: each slot runs one prefill and
//    outputLen decode steps, so output tokens/s = batch·outputLen / (batch·prefill +
//    outputLen·step).
//  * Mixture of experts: weights count every expert, FLOPs the routed ones; decode reads every
//    expert's weights (a batch of slots routes to all of them).
// Pure function of its arguments: thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "engine/chip/efficiency.h"
#include "engine/cost/price_table.h"
#include "engine/cost/transformer_model.h"
#include "engine/hardware/hardware.h"

namespace tpuemu::engine::cost {

// JSON (the "serving" object of a comparison request):
//   {"batch": 96, "inputLen": 1024, "outputLen": 1024, "weights": "bf16"|"int8",
//    "kvCache": "bf16"|"int8", "tp": 8}
// batch 0 or absent: the largest batch that fits; tp 0 or absent: the best group size. Errors:
// INVALID_ARGUMENT naming the field.
struct ServingOptions {
  int64_t batch = 0;  // concurrent sequences per replica
  int64_t tp = 0;     // chips per replica
  int64_t input_len = 1024, output_len = 1024;
  double weight_bytes = 2, kv_bytes = 2;  // per element
};
Result<ServingOptions> ParseServingOptions(const nlohmann::json& serving);
nlohmann::json ServingOptionsToJson(const ServingOptions& options);

struct ServingEstimate {
  bool fits = false;
  std::string problem;  // why not: the weights alone, or not one slot
  int chips = 0;
  int tp = 0, replicas = 0;          // chips per model replica, replicas on the slice
  int64_t batch = 0, max_batch = 0;  // per replica
  double weights_bytes_per_chip = 0, kv_bytes_per_chip = 0, capacity_bytes = 0;
  double kv_bytes_per_token = 0;   // the whole model's, before sharding
  double prefill_seconds = 0;      // one prompt: time to first token without queueing
  double decode_step_seconds = 0;  // one step of the whole batch: time per output token
  double prefill_tokens_per_second_per_chip = 0;
  double decode_tokens_per_second_per_chip = 0;  // decode alone: batch / step / chips
  double output_tokens_per_second_per_chip = 0;  // steady state, prefills interleaved
  std::string decode_bound;                      // "HBM bandwidth" | "MXU" | "ICI"
  double usd_per_million_output_tokens_on_demand = 0, usd_per_million_output_tokens_spot = 0;
};

ServingEstimate EstimateServing(const TransformerShape& shape, const AcceleratorType& type,
                                const ServingOptions& options, const PriceTable& prices,
                                const Efficiency& eff = kDefaultEfficiency);

}  // namespace tpuemu::engine::cost
