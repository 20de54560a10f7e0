// The cost model's efficiency factors: the few numbers that are NOT hardware facts. Those marked
// fitted are the fit on the FITTING set of published runs alone (tests/engine/cost/
// published_runs.h; calibration_split_test checks that they are); the others are assumptions.
// docs/cost-model.md lists the runs, our estimates and the errors on both sets. Change them there
// and here together.
#pragma once

namespace tpuemu::engine::cost {

struct Efficiency {
  // Fraction of the MXU fold model's ideal rate (engine/chip/timing.h DotCost) that XLA-compiled
  // GEMMs reach: operand layout changes, pipeline fill between fusions, imperfect overlap of weight
  // loads. Fitted on the fitting set.
  double mxu = 0.79;
  // Vector-unit element-ops per attention score in a flash-attention kernel (max, subtract,
  // exp, sum, rescale; the backward pass recomputes exp and forms dS = P∘(dP − D)). Google
  // publishes no throughput for the transcendental unit; fitted on the fitting set, where v6e's
  // MXU/VPU ratio makes attention vector-bound.
  double softmax_ops_forward = 5.4;
  double softmax_ops_backward = 9;
  // Share of a layer's tensor-parallel all-reduce time that runs under the layer's compute
  // (engine/cost/estimate.h): MaxText's configs let XLA split those collectives into async steps
  // beside the matmuls (--xla_tpu_enable_async_collective_fusion_multiple_steps,
  // --xla_tpu_overlap_compute_collective_tc in every v5e/v5p config). Fitted on the fitting set
  // (its two tensor-parallel rows are on v5p).
  double tp_overlap = 1.00;
  // Fraction of HBM bandwidth a streaming fusion reaches.
  double hbm = 0.90;
  // Serving (engine/cost/serving_engine.h). None of the four serving constants below is
  // published; each is FITTED (tests/engine/cost/calibration.cpp FitServing) on the fitting rows
  // of tests/engine/cost/published_runs.cpp and no others; docs/cost-model.md ("Accuracy",
  // "Serving") lists those rows and what public sources do say.
  //
  // A bf16 decode step streams weights and KV cache at `hbm`, the chip model's one HBM
  // efficiency. With int8 weights the engines dequantise them to bf16 on the way to the MXU, so
  // halving the bytes need not halve the step: the share of HBM bandwidth an int8 step reaches.
  // Fitted on the JetStream int8 fitting rows (llama3-8b, gemma-2b, llama2-13b on v5e-8); it sits
  // at the top of its grid.
  double serving_hbm_int8 = 1.00;
  // Host and framework time per engine step beyond the chip's work (scheduling, input
  // preparation, sampling hand-off, dispatch). JetStream: fitted with the next constant on the
  // six JetStream fitting rows (jetstream-pytorch benchmarks/summary.md: llama3-8b, gemma-2b,
  // llama2-13b at cache 2048, bf16 and int8, v5e-8). The fit puts it at 0; the one public figure,
  // JetStream pull 122 (2024-07-26: "largest gap < 4ms" between TPU steps, llama2-70b on v5e-8,
  // JetStream MaxText), is a bound, not a value. vLLM: fitted on its one fitting row (vllm pull
  // 16458 "Before", Llama-3.1-8B on v6e-1); no duration is published for the torch_xla V1 TPU
  // backend those runs used.
  double jetstream_step_seconds = 0;
  double vllm_step_seconds = 19.25e-3;
  // JetStream's host time per sequence of a decode step: its orchestrator hands every slot's
  // sampled token to a host thread that detokenises it each step (AI-Hypercomputer/JetStream
  // jetstream/core/orchestrator.py, module docstring, step 7). The mechanism is public, its
  // duration is not: fitted with jetstream_step_seconds.
  double jetstream_sequence_step_seconds = 56e-6;
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
