// A llama-like decoder-only transformer described by its shapes, priced analytically (nothing is
// built or executed, so 70B-parameter models cost microseconds): the StepProfile of one training
// step with AdamW, bf16 compute, f32 master weights, flash attention and one of three
// rematerialisation policies.
//
// JSON (the "model" object of a comparison request; camelCase, like JobSpec):
//   {"preset": "llama2-7b",                       optional: fills every shape below
//    "layers": 32, "dModel": 4096, "heads": 32, "kvHeads": 32, "headDim": 128, "ffn": 11008,
//    "vocab": 32000, "seqLen": 4096, "globalBatch": 256, "gatedMlp": true}
// headDim defaults to dModel / heads, kvHeads to heads, gatedMlp to true (SwiGLU: three MLP
// matrices; false: two). Presets: llama2-7b, llama2-13b, llama2-70b, llama3-8b, llama3-70b
// (Meta's published shapes, seqLen 4096 / 8192, globalBatch 256); given fields override them.
//
// Model FLOPs follow MaxText's training-TFLOPs formula (and Megatron's): 6 × the weight-matmul
// FLOPs of a token (logits included, input embedding excluded) plus 12·seqLen·heads·headDim per
// token and layer for attention, NOT halved for the causal mask. Hardware time counts what runs:
// causal flash attention skips the masked half, and remat recomputes forward work:
//   none     keep every activation; nothing recomputed
//   minimal  keep every weight-matmul output (MaxText "minimal"); recompute attention and the
//            elementwise ops in the backward pass
//   full     keep each layer's input only; recompute the whole layer forward
// Errors: INVALID_ARGUMENT naming the field ("model.heads must be 1..4096").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "engine/cost/step_profile.h"

namespace tpuemu::engine::cost {

struct TransformerShape {
  std::string name = "transformer";  // the preset, or "custom"
  int64_t layers = 0, d_model = 0, heads = 0, kv_heads = 0, head_dim = 0, ffn = 0, vocab = 0;
  int64_t seq_len = 0, global_batch = 0;
  bool gated_mlp = true;
};

enum class Remat { kNone, kMinimal, kFull };
std::string_view RematName(Remat remat);
Result<Remat> ParseRemat(std::string_view name);  // INVALID_ARGUMENT listing none|minimal|full
inline constexpr Remat kAllRemats[] = {Remat::kNone, Remat::kMinimal, Remat::kFull};

// The preset names, for help texts and the dashboard.
std::vector<std::string> TransformerPresets();
Result<TransformerShape> ParseTransformerShape(const nlohmann::json& model);
nlohmann::json TransformerShapeToJson(const TransformerShape& shape);

// Counts, independent of remat.
double TransformerParameters(const TransformerShape& shape);
double TransformerModelFlops(const TransformerShape& shape);  // per step

StepProfile TransformerProfile(const TransformerShape& shape, Remat remat);

}  // namespace tpuemu::engine::cost
