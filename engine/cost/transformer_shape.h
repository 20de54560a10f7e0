// A llama-like decoder-only transformer as the user describes it: its shapes, a preset, and their
// JSON form. What it costs is transformer_model.h.
//
// JSON (the "model" object of a comparison request; camelCase, like JobSpec):
//   {"preset": "llama2-7b",                       optional: fills every shape below
//    "layers": 32, "dModel": 4096, "heads": 32, "kvHeads": 32, "headDim": 128, "ffn": 11008,
//    "vocab": 32000, "seqLen": 4096, "globalBatch": 256, "gatedMlp": true,
//    "experts": 8, "topK": 2, "capacityFactor": 1.25, "sharedExperts": 0,
//    "tiedEmbeddings": false}
// seqLen and globalBatch describe the training step; a model priced for serving only needs
// neither (ShapeUse::kServingOnly leaves them 0). tiedEmbeddings: the logits reuse the embedding
// matrix (Gemma's logits_via_embedding), so it is stored once. headDim defaults to dModel / heads,
// kvHeads to heads, gatedMlp to true (SwiGLU: three MLP matrices; false: two). Presets: llama2-7b,
// llama2-13b, llama2-70b, llama3-8b, llama3-70b (Meta's published shapes, seqLen 4096 / 8192,
// globalBatch 256), mixtral-8x7b, mixtral-8x22b (Mistral's, as MaxText's configs/models/*.yml spell
// them); given fields override them.
//
// Mixture of experts (experts > 1): every layer's MLP is `experts` experts of width ffn, each
// token routed to `topK` of them by a [dModel, experts] gate, plus `sharedExperts` experts every
// token goes through (DeepSeek-style). capacityFactor > 0 is MaxText's token dropping: each
// expert computes capacityFactor·tokens·topK/experts rows whether they are used or not; 0 is
// dropless (exactly tokens·topK rows). Model FLOPs count topK experts (MaxText's formula).
//
// Errors: INVALID_ARGUMENT naming the field ("model.heads must be an integer in 1..1024"). Plain
// data: thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace tpuemu::engine::cost {

struct TransformerShape {
  std::string name = "transformer";  // the preset, or "custom"
  int64_t layers = 0, d_model = 0, heads = 0, kv_heads = 0, head_dim = 0, ffn = 0, vocab = 0;
  int64_t seq_len = 0, global_batch = 0;
  bool gated_mlp = true;
  // Mixture of experts; experts <= 1: a dense MLP.
  int64_t experts = 0, top_k = 0, shared_experts = 0;
  double capacity_factor = 0;    // 0: dropless
  bool tied_embeddings = false;  // the logits use the embedding matrix (stored once)

  bool Moe() const { return experts > 1; }
};

// The preset names, for help texts and the dashboard.
std::vector<std::string> TransformerPresets();
// kTraining requires seqLen and globalBatch (or a preset); kServingOnly leaves them 0 if absent.
enum class ShapeUse { kTraining, kServingOnly };
Result<TransformerShape> ParseTransformerShape(const nlohmann::json& model,
                                               ShapeUse use = ShapeUse::kTraining);

}  // namespace tpuemu::engine::cost
