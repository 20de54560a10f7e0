// How a serving engine runs a model on TPU, as the serving cost model (serving.h) prices it: the
// engine's KV cache layout, its batch scheduling and what a step costs beyond its roofline. One
// profile per engine (docs/cost-model.md, "Serving engines"):
//
//  * jetstream — JetStream (jetstream-pytorch and JetStream-MaxText). The KV cache is one static
//    array per layer of [batch slots, KV heads, cache length, head dim]
//    (AI-Hypercomputer/jetstream-pytorch jetstream_pt/cache_manager.py, KVCacheGenerate), and a
//    decode step attends over the whole array, so it reads every slot's cache over its allocated
//    length whatever the sequences' real lengths (a cache shorter than prompt + output is a
//    rolling window: benchmarks/summary.md's note). Prefill runs one prompt per call between
//    decode steps of the whole batch (continuous batching by slot insertion), so a slot's
//    lifetime costs one prefill plus outputLen decode steps.
//  * vllm — vLLM on TPU. Paged attention over the real length of each sequence (ragged paged
//    attention), and continuous batching with chunked prefill: each engine step runs every
//    running sequence's next token and fills the rest of its token budget
//    (--max-num-batched-tokens, default 2048 here as in AI-Hypercomputer/tpu-recipes
//    inference/trillium/vLLM/Llama3.1/README.md @51a4773) with prompt chunks; at most `batch`
//    (--max-num-seqs) sequences run at once.
//  * ideal — the chip model alone: paged KV cache over the real length, chunked prefill, no
//    framework time per step and HBM at Efficiency::hbm: what the hardware allows.
//
// The per-step host and framework time of jetstream and vllm (scheduling, input preparation,
// sampling and detokenisation hand-off, dispatch) is not published as a duration. What is public
// is the mechanism: JetStream detokenises every slot's token on a host thread each step
// (AI-Hypercomputer/JetStream jetstream/core/orchestrator.py), vLLM TPU runs schedule → copy the
// step's inputs to the TPU → launch → fetch the sampled tokens → update, once per step
// (vllm-project/tpu-inference pull 2507's description), and one bound (JetStream pull 122:
// largest gap between TPU steps under 4 ms). The durations are fitted on the fitting rows of the
// published serving runs only (Efficiency::jetstream_step_seconds,
// jetstream_sequence_step_seconds, vllm_step_seconds; efficiency.h names the rows).
// Pure functions: thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"
#include "engine/chip/efficiency.h"

namespace tpuemu::engine::cost {

enum class ServingEngine { kJetStream, kVllm, kIdeal };

struct EngineProfile {
  ServingEngine engine = ServingEngine::kJetStream;
  bool static_kv_cache = true;   // decode reads the allocated cache length (else the real one)
  bool chunked_prefill = false;  // prefill chunks share steps with decode (else one prompt/call)
  double step_seconds = 0;       // host and framework time per engine step
  double sequence_step_seconds = 0;  // and per sequence in the step
  double hbm_efficiency = 0;         // share of HBM bandwidth a bf16 decode step reaches
  double hbm_efficiency_int8 = 0;    // the same with int8 weights (dequantised on the way)
};

// "jetstream" | "vllm" | "ideal"; INVALID_ARGUMENT naming serving.engine otherwise.
Result<ServingEngine> ParseServingEngine(std::string_view name);
std::string ServingEngineName(ServingEngine engine);

// The engine's profile with the calibrated constants of `eff`.
EngineProfile ProfileOf(ServingEngine engine, const Efficiency& eff);

}  // namespace tpuemu::engine::cost
