// A llama-like decoder-only transformer (transformer_shape.h) priced analytically (nothing is
// built or executed, so 70B-parameter models cost microseconds): its parameter count, its model
// FLOPs and the StepProfile of one training step with AdamW, bf16 compute, f32 master weights,
// flash attention and a MaxText remat policy (remat_policy.h).
//
// Model FLOPs follow MaxText's training-TFLOPs formula (and Megatron's): 6 × the weight-matmul
// FLOPs of a token (logits included, input embedding excluded) plus 12·seqLen·heads·headDim per
// token and layer for attention, NOT halved for the causal mask. Hardware time counts what runs:
// causal flash attention skips the masked half, and the remat policy (remat_policy.h) recomputes
// every weight matmul whose output it neither keeps nor offloads, and (unless "none") attention
// and the elementwise ops. Offloaded tensors cost host-link transfers (StepProfile::host_*).
// Pure functions: thread-safe.
#pragma once

#include "engine/chip/efficiency.h"
#include "engine/cost/remat_policy.h"
#include "engine/cost/step_profile.h"
#include "engine/cost/transformer_shape.h"

namespace tpuemu::engine::cost {

// Counts, independent of remat.
double TransformerParameters(const TransformerShape& shape);
// The layers' parameters one token goes through (routed experts: the topK and the shared ones,
// and the gate), without the embedding and logits: what a decode step reads and multiplies by.
double ActiveLayerParameters(const TransformerShape& shape);
double TransformerModelFlops(const TransformerShape& shape);  // per step

StepProfile TransformerProfile(const TransformerShape& shape, const Remat& remat,
                               const Efficiency& eff = kDefaultEfficiency);

}  // namespace tpuemu::engine::cost
