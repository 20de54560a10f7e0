#include "engine/cost/serving_engine.h"

namespace tpuemu::engine::cost {

Result<ServingEngine> ParseServingEngine(std::string_view name) {
  if (name == "jetstream") return ServingEngine::kJetStream;
  if (name == "vllm") return ServingEngine::kVllm;
  if (name == "ideal") return ServingEngine::kIdeal;
  return Status::InvalidArgument("serving.engine must be \"jetstream\", \"vllm\" or \"ideal\"");
}

std::string ServingEngineName(ServingEngine engine) {
  switch (engine) {
    case ServingEngine::kJetStream:
      return "jetstream";
    case ServingEngine::kVllm:
      return "vllm";
    case ServingEngine::kIdeal:
      return "ideal";
  }
  return "jetstream";
}

EngineProfile ProfileOf(ServingEngine engine, const Efficiency& eff) {
  EngineProfile p;
  p.engine = engine;
  // Both engines stream weights and cache at the rate a streaming fusion reaches (the chip
  // model's one HBM efficiency); with int8 weights the dequantisation keeps them from halving
  // the step (Efficiency::serving_hbm_int8, calibrated).
  p.hbm_efficiency = eff.hbm;
  p.hbm_efficiency_int8 = eff.serving_hbm_int8;
  switch (engine) {
    case ServingEngine::kJetStream:
      p.static_kv_cache = true;
      p.chunked_prefill = false;
      p.step_seconds = eff.jetstream_step_seconds;
      p.sequence_step_seconds = eff.jetstream_sequence_step_seconds;
      break;
    case ServingEngine::kVllm:
      p.static_kv_cache = false;
      p.chunked_prefill = true;
      p.step_seconds = eff.vllm_step_seconds;
      break;
    case ServingEngine::kIdeal:
      p.static_kv_cache = false;
      p.chunked_prefill = true;
      p.step_seconds = 0;
      p.hbm_efficiency_int8 = eff.hbm;
      break;
  }
  return p;
}

}  // namespace tpuemu::engine::cost
