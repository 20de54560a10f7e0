#include "tests/engine/cost/published_runs.h"

#include <cmath>

namespace tpuemu::engine::cost {
namespace {

// MaxText's global_parameter_scale (pyconfig.get_individual_scales on base.yml's 2048-wide,
// 16-head, 7168-ffn, 16-layer model with 128-wide heads and a 32000 vocabulary).
TransformerShape Scale(int scale, int64_t seq, int64_t per_device_batch, int chips) {
  const int log2 = static_cast<int>(std::log2(scale));
  const int base = log2 / 3, rem = log2 % 3;
  const int heads_scale = base + (rem > 0), emb_scale = base + (rem > 1), layer_scale = base;
  TransformerShape s;
  s.name = std::to_string(scale) + "B";
  s.layers = 16 << layer_scale;
  s.d_model = 2048 << emb_scale;
  s.heads = s.kv_heads = 16 << heads_scale;
  s.head_dim = 128;
  s.ffn = 7168 << heads_scale;
  s.vocab = 32000;
  s.seq_len = seq;
  s.global_batch = per_device_batch * chips;  // MaxText: a tp group holds tp x its share
  return s;
}

TransformerShape Preset(const char* preset, int64_t seq, int64_t global_batch) {
  Result<TransformerShape> s = ParseTransformerShape({{"preset", preset}});
  s->seq_len = seq;
  s->global_batch = global_batch;
  return *s;
}

Remat Named(const char* name) { return *ParseRemat(name); }

// The recipes' remat_policy=custom: the layer input and these projections offloaded, the rest
// recomputed.
Remat Custom(bool out_proj) {
  nlohmann::json j = {{"decoderLayerInput", "offload"},
                      {"queryProj", "offload"},
                      {"keyProj", "offload"},
                      {"valueProj", "offload"}};
  if (out_proj) j["outProj"] = "offload";
  return *ParseRematJson(j);
}

}  // namespace

double PublishedTrainingRun::Step() const {
  if (step_seconds > 0) return step_seconds;
  const AcceleratorType t = *FindAcceleratorType(type);
  return TransformerModelFlops(shape) / t.chips / (tflops_per_chip * 1e12);
}

double PublishedTrainingRun::Mfu() const {
  const AcceleratorType t = *FindAcceleratorType(type);
  return TransformerModelFlops(shape) / t.chips / Step() /
         Spec(t.generation).published_peak_bf16_flops;
}

std::string PublishedTrainingRun::Generation() const {
  return std::string(Spec(FindAcceleratorType(type)->generation).name);
}

const std::vector<PublishedTrainingRun>& PublishedTrainingRuns() {
  static const std::vector<PublishedTrainingRun> runs = [] {
    const Plan fsdp{Strategy::kFsdp, 1};
    auto tp = [](int d) { return Plan{Strategy::kTensorParallel, d}; };
    const std::string mt = "AI-Hypercomputer/maxtext ";
    const std::string v5e = mt + "MaxText/configs/v5e/README.md @76bd53b (config: ";
    const std::string v5p = mt + "MaxText/configs/v5p/README.md (config: ";
    const std::string l2 = mt + "getting_started/Run_Llama2.md (config: ";
    const std::string rec = "AI-Hypercomputer/tpu-recipes training/trillium/";
    return std::vector<PublishedTrainingRun>{
        {v5e + "16b.sh @0707751)", Scale(16, 2048, 6, 256), "v5litepod-256", fsdp, Remat::kFull, 0,
         120},
        {v5e + "32b.sh)", Scale(32, 2048, 4, 256), "v5litepod-256", fsdp, Remat::kFull, 0, 132},
        {v5e + "64b.sh)", Scale(64, 2048, 2, 256), "v5litepod-256", fsdp, Remat::kFull, 0, 118},
        {v5e + "128b.sh)", Scale(128, 2048, 1, 256), "v5litepod-256", tp(16),
         Named("minimal_offloaded"), 0, 110},
        {l2 + "v5e/llama2_70b.sh @446ccec)", Preset("llama2-70b", 2048, 2 * 256), "v5litepod-256",
         fsdp, Named("qkv_proj_offloaded"), 0, 0.57 * 197},
        {v5p + "32b.sh)", Scale(32, 2048, 7, 64), "v5p-128", tp(4), Remat::kMinimal, 0, 328},
        {v5p + "64b.sh)", Scale(64, 2048, 3, 64), "v5p-128", tp(4), Remat::kMinimal, 0, 323},
        {v5p + "128b.sh)", Scale(128, 2048, 1, 128), "v5p-256", tp(8), Remat::kMinimal, 0, 315},
        {l2 + "v5p/llama2_70b.sh)", Preset("llama2-70b", 4096, 4 * 64), "v5p-128", fsdp,
         Named("save_dot_except_mlpwi"), 0, 0.65 * 459},
        {rec + "Llama3.1-8B-MaxText/v6e-8/cluster_toolkit/run_recipe.sh @871c882",
         Preset("llama3-8b", 8192, 3 * 8), "v6e-8", fsdp, Custom(true), 3.443, 0},
        {rec + "Llama3.1-8B-MaxText/v6e-256/README.md @a9e0929", Preset("llama3-8b", 8192, 4 * 256),
         "v6e-256", fsdp, Custom(true), 4.546, 0},
        {rec + "Llama3.1-70B-MaxText/v6e-256/README.md @3596002",
         Preset("llama3-70b", 8192, 5 * 256), "v6e-256", fsdp, Custom(false), 42.656, 0},
        // Its tuning_params say per_device_batch_size 3, but the log line it prints
        // (total_weights 2097152, 905 tokens/s/device x 9.052 s) is 2 sequences per chip.
        {rec + "Llama2-70B-MaxText/README.md @9e458c7 (log line: 2 sequences per chip)",
         Preset("llama2-70b", 4096, 2 * 256), "v6e-256", fsdp, Named("qkv_proj_offloaded"), 9.052,
         0},
        {rec + "Mixtral-8x7B-MaxText/cluster_toolkit/README.md @1ec7415 (run_recipe.sh @4dc175f)",
         [] {
           TransformerShape s = Preset("mixtral-8x7b", 4096, 12 * 256);
           s.capacity_factor = 1.25;
           return s;
         }(),
         "v6e-256", fsdp, Custom(true), 13.484, 0},
        {rec + "Mixtral-8x22B-MaxText/README.md @03fb496 (run_recipe.sh: fsdp 64 x ep 4)",
         [] {
           TransformerShape s = Preset("mixtral-8x22b", 4096, 8 * 256);
           s.capacity_factor = 1.25;
           return s;
         }(),
         "v6e-256", Plan{Strategy::kFsdp, 1, 4}, Custom(true), 24.706, 0},
    };
  }();
  return runs;
}

const std::vector<PublishedServingRun>& PublishedServingRuns() {
  static const std::vector<PublishedServingRun> runs = [] {
    // jetstream-pytorch: ShareGPT prompts, at most 1024 tokens in and 1024 out, cache 2048;
    // the mean lengths are not published, so the runs are priced at those maxima.
    const std::string jp = "AI-Hypercomputer/jetstream-pytorch benchmarks/summary.md @f636ff7";
    auto sharegpt = [](int64_t batch, bool int8) {
      ServingOptions o;
      o.batch = batch;
      o.input_len = 1024;
      o.output_len = 1024;
      o.weight_bytes = o.kv_bytes = int8 ? 1 : 2;
      o.tp = 8;  // --platform=tpu=8: the model split over the 8 chips
      return o;
    };
    // tpu-recipes: 995 OpenOrca requests, 217011 tokens in and 934964 out (means 218 and 940),
    // per_device_batch_size 11 on 8 chips. Illustrative: the README says "something like", the
    // v5e recipe (inference/v5e/JetStream-Maxtext/Llama2-7B) prints the very same numbers, and
    // its median time per output token (164 ms) is tens of times a 7B model's decode step.
    ServingOptions orca;
    orca.batch = 88;
    orca.input_len = 218;
    orca.output_len = 940;
    orca.tp = 8;  // ici_tensor_parallelism=-1
    return std::vector<PublishedServingRun>{
        {jp, Preset("llama2-7b", 2048, 1), "v5litepod-8", sharegpt(96, false), 3663},
        {jp, Preset("llama2-7b", 2048, 1), "v5litepod-8", sharegpt(96, true), 4783},
        {jp, Preset("llama2-13b", 2048, 1), "v5litepod-8", sharegpt(48, false), 2056},
        {jp, Preset("llama2-13b", 2048, 1), "v5litepod-8", sharegpt(96, true), 3458},
        {jp, Preset("llama3-8b", 2048, 1), "v5litepod-8", sharegpt(128, false), 8249},
        {jp, Preset("llama3-8b", 2048, 1), "v5litepod-8", sharegpt(256, true), 10873},
        {"AI-Hypercomputer/tpu-recipes inference/trillium/JetStream-Maxtext/Llama2-7B/README.md "
         "@5ba55c8",
         Preset("llama2-7b", 2048, 1), "v6e-8", orca, 3061.78, true},
    };
  }();
  return runs;
}

}  // namespace tpuemu::engine::cost
