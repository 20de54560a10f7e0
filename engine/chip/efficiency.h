// The cost model's efficiency factors: the few numbers that are NOT hardware facts. Each was
// chosen (calibrated) so that the model's estimates match published MaxText measurements on
// v5e, v5p and v6e; docs/cost-model.md lists the measurements, our estimates and the error.
// Change them there and here together.
#pragma once

namespace tpuemu::engine::cost {

struct Efficiency {
  // Fraction of the MXU fold model's ideal rate (engine/chip/timing.h DotCost) that XLA-compiled
  // GEMMs reach: operand layout changes, pipeline fill between fusions, imperfect overlap of weight
  // loads. Calibrated.
  double mxu = 0.83;
  // Vector-unit element-ops per attention score in a flash-attention kernel (max, subtract,
  // exp, sum, rescale; the backward pass recomputes exp and forms dS = P∘(dP − D)). Google
  // publishes no throughput for the transcendental unit; calibrated against v6e, whose MXU/VPU
  // ratio makes attention vector-bound.
  double softmax_ops_forward = 6;
  double softmax_ops_backward = 10;
  // Fraction of HBM bandwidth a streaming fusion reaches.
  double hbm = 0.90;
  // Fraction of HBM bandwidth a serving engine's decode step reaches over the whole step
  // (weights and KV cache read once per step; the sampling, scheduling and host round trips of
  // JetStream and vLLM included). Calibrated on the published serving runs
  // (docs/cost-model.md, "Serving").
  double serving_hbm = 0.65;
  // The same with int8 weights and KV cache: the engines dequantise them to bf16 on the way to
  // the MXU, so halving the bytes does not halve the step. Calibrated likewise.
  double serving_hbm_int8 = 0.46;
  // Fraction of ICI link bandwidth a collective reaches, and the latency per ring hop.
  double ici = 0.85;
  double ici_hop_seconds = 2e-6;
  // Fraction of the host link's bandwidth (host_link.h) offloading reaches. An assumption, like
  // ici: the same share of a link's peak.
  double host = 0.85;
  // HBM a program may use: XLA keeps some for itself (program binary, scratch).
  double usable_hbm = 0.95;
};

inline constexpr Efficiency kDefaultEfficiency{};

}  // namespace tpuemu::engine::cost
