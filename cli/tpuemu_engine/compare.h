// `tpuemu-engine compare`: which TPU for a model — step time, throughput, MFU, HBM fit, the
// bottleneck and dollars on every accelerator type (engine/cost/compare.h), side by side.
//
//   tpuemu-engine compare --model llama2-7b --seq-len 2048 --global-batch 512
//   tpuemu-engine compare --layers 24 --d-model 2048 --heads 16 --ffn 5632 --vocab 32000
//       --seq-len 2048 --global-batch 256 --accelerator-types v5e,v6e --format csv
//   tpuemu-engine compare --program mlp.json --batch 512 --strategy dp
//   tpuemu-engine compare --hlo step.hlo [--allow-unsupported] --accelerator-types v5p,v6e
//   tpuemu-engine compare --model mixtral-8x7b --capacity-factor 1.25 --accelerator-types v6e
//   tpuemu-engine compare --model llama3-8b --global-batch 24 --accelerator-types v6e-8
//       --remat '{"decoderLayerInput":"offload","queryProj":"offload"}'
//   tpuemu-engine compare --model llama2-7b --serve --serve-batch 96 --input-len 1024
//       --output-len 1024 --weights int8 --kv-cache int8 --accelerator-types v5e-8,v6e-8
//   tpuemu-engine compare --model llama3-8b --serve --serve-engine vllm --chunk-tokens 512
//   tpuemu-engine compare --request body.json      (the POST /_emulator/compare body, verbatim)
//
// The flags build the same JSON request POST /_emulator/compare takes (engine/cost/
// compare_request.h), so the two agree by construction. Built-in workloads are tpuemud's (the
// CLI links the engine only): use the endpoint for them. RunCompare() returns the report (an
// aligned table, JSON or CSV) or INVALID_ARGUMENT / NOT_FOUND naming the flag or field.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"

namespace CLI {
class App;
}

namespace tpuemu::cli {

struct CompareCliOptions {
  std::string request;  // a JSON request file; excludes every other input flag
  std::string model;    // a preset
  int64_t layers = 0, d_model = 0, heads = 0, kv_heads = 0, head_dim = 0, ffn = 0, vocab = 0;
  int64_t seq_len = 0, global_batch = 0;
  bool no_gated_mlp = false;
  int64_t experts = 0, top_k = 0, shared_experts = 0;  // mixture of experts
  double capacity_factor = -1;                         // < 0: not given
  std::string program;                                 // a JSON IR program file
  std::string hlo;  // an HLO text file (engine/cost/program_profile.h: FiguresFromHloModule)
  bool allow_unsupported = false;  // with hlo: unsupported instructions priced at zero
  int64_t batch = 0;  // a program's or module's global batch; 0 = from its first (data) input
  std::string accelerator_types;  // "v5e,v5p-128"; empty = all
  std::string strategy = "auto";
  int tp = 0, ep = 0, cp = 0, microbatches = 0;
  bool offload_optimizer = false;
  std::string remat = "auto";  // a policy name, or a custom policy as a JSON object
  // Serving (--serve): also price serving the model on every type.
  bool serve = false;
  int64_t serve_batch = 0, input_len = 0, output_len = 0, serve_tp = 0;
  std::string weights, kv_cache;  // bf16 | int8
  std::string serve_engine;       // jetstream | vllm | ideal (default jetstream)
  int64_t cache_len = 0, chunk_tokens = 0;
  bool shard_on_batch = false;
  std::string prices;  // a price override file (engine/cost/price_table.h)
  bool detail = false;
  std::string format = "table";  // table | json | csv
};

// Registers the subcommand and its flags on `app`, writing into `options` (which must outlive
// the parse).
CLI::App* AddCompareCommand(CLI::App& app, CompareCliOptions& options);
Result<std::string> RunCompare(const CompareCliOptions& options);

}  // namespace tpuemu::cli
