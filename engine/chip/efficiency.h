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
  double mxu = 0.82;
  // Vector-unit element-ops per attention score in a flash-attention kernel (max, subtract,
  // exp, sum, rescale; the backward pass recomputes exp and forms dS = P∘(dP − D)). Google
  // publishes no throughput for the transcendental unit; calibrated against v6e, whose MXU/VPU
  // ratio makes attention vector-bound.
  double softmax_ops_forward = 6;
  double softmax_ops_backward = 10;
  // Fraction of HBM bandwidth a streaming fusion reaches.
  double hbm = 0.90;
  // Serving (engine/cost/serving_engine.h): a bf16 decode step streams weights and KV cache at
  // `hbm`, the chip model's one HBM efficiency. With int8 weights the engines dequantise them to
  // bf16 on the way to the MXU, so halving the bytes does not halve the step: the share of HBM
  // bandwidth an int8 step reaches. Calibrated on the fitting rows of the published serving runs
  // (docs/cost-model.md, "Serving").
  double serving_hbm_int8 = 1.00;
  // Host and framework time per engine step beyond the chip's work (scheduling, input
  // preparation, sampling hand-off, dispatch), per engine. Not published; calibrated on the
  // fitting rows of each engine's published runs (docs/cost-model.md, "Serving").
  double jetstream_step_seconds = 0;
  double vllm_step_seconds = 19.25e-3;
  // JetStream's host time per sequence of a decode step (each slot's token is handed to the
  // host's detokenising thread every step). Calibrated like the above.
  double jetstream_sequence_step_seconds = 58e-6;
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
