// GPU figures for context beside a comparison: NVIDIA H100 and H200 (SXM), one 8-GPU machine each
// (Google Cloud's a3-highgpu-8g and a3-ultragpu-8g), priced from published figures. They are
// OUTSIDE the TPU model: nothing here goes through the chip model (engine/chip/) or its
// calibration; each figure is a published peak times a published efficiency, so the rows say what
// the GPU's own vendor and users report, not what tpuemu emulates. The sources, with their dates,
// are in gpu_reference.cpp beside each figure and in docs/cost-model.md ("GPU context").
//
//  * Training: model FLOPs per unit (the comparison's, so the TPU rows' MFU and these share one
//    definition) at the published bf16 dense peak times a published MFU. The training state
//    (bf16 weights and gradients, f32 Adam moments and master weights: 16 bytes a parameter,
//    sharded over the machine) is held against HBM; activations are not counted.
//  * Serving (model shapes, when the comparison prices serving): the roofline of a paged,
//    continuously batched engine (vLLM's on GPU): a decode step reads the weights and the
//    sequences' KV cache at a published share of HBM bandwidth (MBU), or computes at the MFU,
//    whichever is longer; a prompt's prefill computes at the MFU and takes its turn between
//    decode steps. Each replica is `tp` GPUs of the machine (the group cheapest per token unless
//    serving.tp names 1, 2, 4 or 8); NVLink all-reduces are not priced.
// Pure functions of their arguments: thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/cost/serving.h"

namespace tpuemu::engine::cost {

struct GpuSpec {
  std::string name;          // "H100 SXM"
  std::string machine_type;  // "a3-highgpu-8g"
  int gpus = 8;              // per machine
  double peak_bf16_flops = 0, hbm_bytes = 0, hbm_bytes_per_second = 0;
  std::string spec_source;
  double on_demand_usd_per_gpu_hour = 0, spot_usd_per_gpu_hour = 0;
  std::string region, price_source, price_as_of;
  double training_mfu = 0;  // assumed: a published MFU
  std::string mfu_source;
  double serving_mbu = 0;  // assumed: a published model bandwidth utilisation in decode
  std::string mbu_source;
  double usable_hbm = 0;      // share of HBM a serving engine gives weights and KV cache
  int64_t max_num_seqs = 0;   // the engine's default cap on running sequences
  std::string engine_source;  // where the two above come from
};

// H100 SXM and H200 SXM, in that order.
const std::vector<GpuSpec>& GpuSpecs();

struct GpuTraining {
  double step_seconds = 0;  // one step of the comparison's units on the machine
  double units_per_second_per_gpu = 0, units_per_second = 0;
  double usd_per_million_units_on_demand = 0, usd_per_million_units_spot = 0;
  double state_bytes_per_gpu = 0;  // weights, gradients and Adam state, sharded
  bool fits = false;
  std::string problem;
};

struct GpuServing {
  bool fits = false;
  std::string problem;
  int tp = 0, replicas = 0;
  int64_t batch = 0, max_batch = 0;  // per replica
  double weights_bytes_per_gpu = 0, kv_bytes_per_gpu = 0;
  double prefill_seconds = 0;      // one prompt: time to first token without queueing
  double decode_step_seconds = 0;  // time per output token
  double output_tokens_per_second_per_gpu = 0;
  std::string decode_bound;  // "HBM bandwidth" | "compute"
  double usd_per_million_output_tokens_on_demand = 0, usd_per_million_output_tokens_spot = 0;
};

struct GpuReferenceRow {
  GpuSpec spec;
  std::optional<GpuTraining> training;  // when the comparison has a training step
  std::optional<GpuServing> serving;    // model shapes with serving options
};

// Training from the comparison's model FLOPs per step and units per step (nothing when it has
// none); serving when `shape` and `serving` are given.
GpuTraining EstimateGpuTraining(const GpuSpec& gpu, double model_flops_per_step,
                                double units_per_step, double parameters);
GpuServing EstimateGpuServing(const GpuSpec& gpu, const TransformerShape& shape,
                              const ServingOptions& serving);
std::vector<GpuReferenceRow> GpuReference(double model_flops_per_step, double units_per_step,
                                          double parameters, const TransformerShape* shape,
                                          const std::optional<ServingOptions>& serving);

}  // namespace tpuemu::engine::cost
