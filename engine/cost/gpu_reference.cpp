#include "engine/cost/gpu_reference.h"

#include <algorithm>
#include <cmath>

#include "engine/cost/number_text.h"

namespace tpuemu::engine::cost {
namespace {

// The training MFU both GPUs are assumed to reach: Meta's Llama 3 405B pre-training, bf16 on 8,192
// H100s (TP 8, PP 16, DP 64, 8K sequences): 430 TFLOPS per GPU, 43% MFU (41% on 16,384 GPUs,
// 38% with 128K-token context parallelism). No H200 run is published with an MFU this way; the
// H200 has the H100's tensor cores, so the same share of the same peak is assumed.
constexpr double kLlama3Mfu = 0.43;
constexpr const char* kLlama3 =
    "Llama 3 405B pre-training, bf16 on 8,192 H100s: 43% MFU (Dubey et al., \"The Llama 3 Herd "
    "of Models\", arXiv:2407.21783, 2024, Table 4); assumed for the H200 too";
// Decode's share of HBM bandwidth: Databricks measured 60% model bandwidth utilisation on
// 2xH100-80GB at batch 1 with TensorRT-LLM (55% on 4xA100-40GB) and saw it fall as the batch
// grows, so at the large batches priced here the rows are optimistic.
constexpr double kDatabricksMbu = 0.60;
constexpr const char* kDatabricks =
    "60% MBU at batch 1 on 2xH100-80GB, TensorRT-LLM (Databricks, \"LLM Inference Performance "
    "Engineering: Best Practices\", 2023-10-12, "
    "https://www.databricks.com/blog/llm-inference-performance-engineering-best-practices); "
    "it falls as the batch grows";
// vLLM on a GPU with >= 70 GiB that is not an A100: --gpu-memory-utilization 0.9 and a default
// --max-num-seqs of 1024 (vllm/engine/arg_utils.py, EngineArgs.get_batch_defaults).
constexpr const char* kVllm =
    "vLLM defaults: --gpu-memory-utilization 0.9, --max-num-seqs 1024 on GPUs of >= 70 GiB "
    "(vllm/engine/arg_utils.py, EngineArgs.get_batch_defaults)";
constexpr double kBytesPerTrainedParameter = 16;  // bf16 weights and grads, f32 master + 2 moments

double UsdPerMillion(double usd_per_gpu_hour, double per_second_per_gpu) {
  return per_second_per_gpu > 0 ? usd_per_gpu_hour / (per_second_per_gpu * 3600) * 1e6 : 0;
}

std::string Gb(double bytes) { return Number(bytes / 1e9, "%.1f GB"); }

GpuServing ServeOn(const GpuSpec& g, const TransformerShape& s, const ServingOptions& o, int tp) {
  GpuServing v;
  v.tp = tp;
  v.replicas = g.gpus / tp;
  const double group = tp;
  const double layers = static_cast<double>(s.layers);
  const double q = static_cast<double>(s.heads * s.head_dim);
  const double active = ActiveLayerParameters(s);
  const double logits = static_cast<double>(s.d_model) * static_cast<double>(s.vocab);
  v.weights_bytes_per_gpu = TransformerParameters(s) * o.weight_bytes / group;
  // KV heads split over the group up to their number, as on TPU.
  const double kv_per_token = 2 * layers * static_cast<double>(s.kv_heads * s.head_dim) *
                              o.kv_bytes / std::min(group, static_cast<double>(s.kv_heads));
  const double prompt = static_cast<double>(o.input_len);
  const double out = static_cast<double>(o.output_len);
  const double context = prompt + out / 2;  // paged: the mean real length
  const double slot = context * kv_per_token;
  const double free_bytes = g.hbm_bytes * g.usable_hbm - v.weights_bytes_per_gpu;
  v.max_batch = free_bytes > 0 ? static_cast<int64_t>(std::floor(free_bytes / slot)) : 0;
  if (v.max_batch < 1) {
    v.problem = "does not fit: weights need " + Gb(v.weights_bytes_per_gpu) +
                " per GPU and one sequence of KV cache " + Gb(slot) + ", " +
                Gb(g.hbm_bytes * g.usable_hbm) + " usable";
    return v;
  }
  v.batch = o.batch > 0 ? o.batch : std::min(v.max_batch, g.max_num_seqs);
  v.fits = v.batch <= v.max_batch;
  if (!v.fits) {
    v.problem = "batch too large: at most " + std::to_string(v.max_batch) +
                " sequences of KV cache fit beside the weights";
  }
  const double batch = static_cast<double>(v.batch);
  v.kv_bytes_per_gpu = batch * slot;
  const double flops_rate = g.peak_bf16_flops * g.training_mfu * group;
  const double token_flops = 2 * (active + logits) + 4 * context * q * layers;
  const double hbm =
      (v.weights_bytes_per_gpu + v.kv_bytes_per_gpu) / (g.hbm_bytes_per_second * g.serving_mbu);
  const double compute = batch * token_flops / flops_rate;
  v.decode_step_seconds = std::max(hbm, compute);
  v.decode_bound = hbm >= compute ? "HBM bandwidth" : "compute";
  v.prefill_seconds =
      (prompt * (2 * active + 4 * (prompt / 2) * q * layers) + 2 * logits) / flops_rate;
  // Each sequence's prefill takes its turn between decode steps of the batch.
  const double per_replica =
      batch * out / (batch * v.prefill_seconds + out * v.decode_step_seconds);
  v.output_tokens_per_second_per_gpu = per_replica / group;
  v.usd_per_million_output_tokens_on_demand =
      UsdPerMillion(g.on_demand_usd_per_gpu_hour, v.output_tokens_per_second_per_gpu);
  v.usd_per_million_output_tokens_spot =
      UsdPerMillion(g.spot_usd_per_gpu_hour, v.output_tokens_per_second_per_gpu);
  return v;
}

}  // namespace

const std::vector<GpuSpec>& GpuSpecs() {
  static const std::vector<GpuSpec> specs = [] {
    GpuSpec h100;
    h100.name = "H100 SXM";
    h100.machine_type = "a3-highgpu-8g";
    // NVIDIA's H100 datasheet: BF16 tensor core 1,979 TFLOPS with 2:4 sparsity (989 dense),
    // 80 GB HBM3 at 3.35 TB/s (SXM).
    h100.peak_bf16_flops = 989e12;
    h100.hbm_bytes = 80e9;
    h100.hbm_bytes_per_second = 3.35e12;
    h100.spec_source =
        "NVIDIA H100 datasheet (https://www.nvidia.com/en-us/data-center/h100/): SXM, bf16 "
        "989 TFLOPS dense (1,979 with sparsity), 80 GB HBM3, 3.35 TB/s";
    // a3-highgpu in us-central1: the GPU plus its share of the machine's vCPUs and memory, from
    // Google's Cloud Billing Catalog API as tabulated on 2026-09-26.
    h100.on_demand_usd_per_gpu_hour = 10.9791;
    h100.spot_usd_per_gpu_hour = 6.571;
    h100.region = "us-central1";
    h100.price_source =
        "Google Cloud Billing Catalog API (Compute Engine SKUs: GPU + vCPU + RAM of a3-highgpu), "
        "as tabulated in github.com/tgarg01/silybench-data derived/csv/gpu_prices.csv";
    h100.price_as_of = "2026-09-26";
    GpuSpec h200 = h100;
    h200.name = "H200 SXM";
    h200.machine_type = "a3-ultragpu-8g";
    // NVIDIA's H200 page: the H100's tensor cores (bf16 1,979 TFLOPS with sparsity, 989 dense),
    // 141 GB HBM3e at 4.8 TB/s (SXM).
    h200.hbm_bytes = 141e9;
    h200.hbm_bytes_per_second = 4.8e12;
    h200.spec_source =
        "NVIDIA H200 (https://www.nvidia.com/en-us/data-center/h200/): SXM, bf16 989 TFLOPS "
        "dense (1,979 with sparsity), 141 GB HBM3e, 4.8 TB/s";
    // a3-ultragpu-8g in us-central1, per GPU (an eighth of the machine), from the Cloud Billing
    // Catalog API, snapshot of 2026-10-13.
    h200.on_demand_usd_per_gpu_hour = 10.4365;
    h200.spot_usd_per_gpu_hour = 6.2607;
    h200.price_source =
        "Google Cloud Billing Catalog API (a3-ultragpu-8g, an eighth of the machine), as "
        "tabulated in huggingface.co/datasets/tanod/cloud-gpu-list-prices";
    h200.price_as_of = "2026-10-13";
    for (GpuSpec* g : {&h100, &h200}) {
      g->training_mfu = kLlama3Mfu;
      g->mfu_source = kLlama3;
      g->serving_mbu = kDatabricksMbu;
      g->mbu_source = kDatabricks;
      g->usable_hbm = 0.9;
      g->max_num_seqs = 1024;
      g->engine_source = kVllm;
    }
    return std::vector<GpuSpec>{h100, h200};
  }();
  return specs;
}

GpuTraining EstimateGpuTraining(const GpuSpec& g, double model_flops, double units,
                                double parameters) {
  GpuTraining t;
  const double gpus = g.gpus;
  t.step_seconds = model_flops / (gpus * g.peak_bf16_flops * g.training_mfu);
  t.units_per_second = units / t.step_seconds;
  t.units_per_second_per_gpu = t.units_per_second / gpus;
  t.usd_per_million_units_on_demand =
      UsdPerMillion(g.on_demand_usd_per_gpu_hour, t.units_per_second_per_gpu);
  t.usd_per_million_units_spot = UsdPerMillion(g.spot_usd_per_gpu_hour, t.units_per_second_per_gpu);
  t.state_bytes_per_gpu = kBytesPerTrainedParameter * parameters / gpus;
  t.fits = t.state_bytes_per_gpu <= g.hbm_bytes;
  if (!t.fits) {
    const double machines = std::ceil(t.state_bytes_per_gpu / g.hbm_bytes);
    t.problem = "training state (16 bytes a parameter) needs " + Gb(t.state_bytes_per_gpu) +
                " per GPU of " + Gb(g.hbm_bytes) + ": at least " + Number(machines, "%.0f") +
                " machines (the figures per GPU and per token stay as given)";
  }
  return t;
}

GpuServing EstimateGpuServing(const GpuSpec& g, const TransformerShape& s,
                              const ServingOptions& o) {
  if (o.tp > 0 && (o.tp > g.gpus || g.gpus % o.tp != 0)) {
    GpuServing v;
    v.problem = "serving.tp " + std::to_string(o.tp) + " does not divide the machine's " +
                std::to_string(g.gpus) + " GPUs";
    return v;
  }
  std::vector<int> groups;
  if (o.tp > 0) {
    groups.push_back(static_cast<int>(o.tp));
  } else {
    for (int tp = 1; tp <= g.gpus; tp *= 2) groups.push_back(tp);
  }
  std::optional<GpuServing> best;
  for (int tp : groups) {
    GpuServing v = ServeOn(g, s, o, tp);
    // Fits beats not; then cheaper per token; among those that do not fit, more room.
    const bool better = !best || (v.fits != best->fits ? v.fits
                                  : v.fits             ? v.output_tokens_per_second_per_gpu >
                                                 best->output_tokens_per_second_per_gpu
                                           : v.max_batch > best->max_batch);
    if (better) best = v;
  }
  return *best;
}

std::vector<GpuReferenceRow> GpuReference(double model_flops, double units, double parameters,
                                          const TransformerShape* shape,
                                          const std::optional<ServingOptions>& serving) {
  std::vector<GpuReferenceRow> rows;
  for (const GpuSpec& g : GpuSpecs()) {
    GpuReferenceRow row;
    row.spec = g;
    if (model_flops > 0 && units > 0) {
      row.training = EstimateGpuTraining(g, model_flops, units, parameters);
    }
    if (shape && serving) row.serving = EstimateGpuServing(g, *shape, *serving);
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace tpuemu::engine::cost
