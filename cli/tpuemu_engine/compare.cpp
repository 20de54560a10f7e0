#include "cli/tpuemu_engine/compare.h"

#include <CLI/CLI.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "engine/cost/compare_report.h"
#include "engine/cost/compare_request.h"

namespace tpuemu::cli {
namespace {

using nlohmann::json;

constexpr std::streamsize kMaxFileBytes = std::streamsize{256} << 20;

Result<std::string> ReadTextFile(const std::string& flag, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(flag + ": cannot open '" + path + "'");
  std::ostringstream text;
  text << in.rdbuf();
  if (text.tellp() > kMaxFileBytes) {
    return Status::InvalidArgument(flag + ": '" + path + "' is larger than 256 MiB");
  }
  return std::move(text).str();
}

Result<json> ReadJsonFile(const std::string& flag, const std::string& path) {
  Result<std::string> text = ReadTextFile(flag, path);
  if (!text.ok()) return text.status();
  json j = json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Status::InvalidArgument(flag + ": '" + path + "' is not JSON");
  return j;
}

// The flags as the endpoint's request body.
Result<json> RequestBody(const CompareCliOptions& o) {
  const bool shapes = o.layers || o.d_model || o.heads || o.kv_heads || o.head_dim || o.ffn ||
                      o.vocab || o.seq_len || o.global_batch || o.no_gated_mlp || o.experts ||
                      o.top_k || o.shared_experts || o.capacity_factor >= 0;
  const bool serving = o.serve_batch || o.input_len || o.output_len || o.serve_tp ||
                       !o.weights.empty() || !o.kv_cache.empty() || !o.serve_engine.empty() ||
                       o.cache_len || o.chunk_tokens || o.shard_on_batch;
  if (serving && !o.serve) {
    return Status::InvalidArgument(
        "--serve-batch, --serve-tp, --serve-engine, --input-len, --output-len, --cache-len, "
        "--chunk-tokens, --shard-on-batch, --weights and --kv-cache: need --serve");
  }
  if (!o.request.empty()) {
    if (!o.model.empty() || shapes || !o.program.empty() || !o.hlo.empty()) {
      return Status::InvalidArgument(
          "--request: excludes --model, the shape flags, --program and --hlo");
    }
    return ReadJsonFile("--request", o.request);
  }
  if (o.allow_unsupported && o.hlo.empty()) {
    return Status::InvalidArgument("--allow-unsupported: applies to --hlo only");
  }
  json body = json::object();
  if (!o.program.empty() || !o.hlo.empty()) {
    if (!o.model.empty() || shapes || (!o.program.empty() && !o.hlo.empty())) {
      return Status::InvalidArgument(
          "--program and --hlo: exclude each other, --model and the shape flags");
    }
    if (!o.program.empty()) {
      Result<json> program = ReadJsonFile("--program", o.program);
      if (!program.ok()) return program.status();
      body["program"] = *program;
    } else {
      Result<std::string> text = ReadTextFile("--hlo", o.hlo);
      if (!text.ok()) return text.status();
      body["hlo"] = {{"text", *std::move(text)}, {"allowUnsupported", o.allow_unsupported}};
    }
    if (o.batch > 0) body["batch"] = o.batch;
  } else {
    if (o.model.empty() && !shapes) {
      return Status::InvalidArgument(
          "give --model PRESET, the model's shapes (--layers, --d-model, ...), --program, --hlo "
          "or --request");
    }
    if (o.batch > 0) return Status::InvalidArgument("--batch: applies to --program and --hlo only");
    json model = json::object();
    if (!o.model.empty()) model["preset"] = o.model;
    for (const auto& [key, value] : {std::pair{"layers", o.layers},
                                     {"dModel", o.d_model},
                                     {"heads", o.heads},
                                     {"kvHeads", o.kv_heads},
                                     {"headDim", o.head_dim},
                                     {"ffn", o.ffn},
                                     {"vocab", o.vocab},
                                     {"seqLen", o.seq_len},
                                     {"globalBatch", o.global_batch},
                                     {"experts", o.experts},
                                     {"topK", o.top_k},
                                     {"sharedExperts", o.shared_experts}}) {
      if (value != 0) model[key] = value;
    }
    if (o.no_gated_mlp) model["gatedMlp"] = false;
    if (o.capacity_factor >= 0) model["capacityFactor"] = o.capacity_factor;
    body["model"] = model;
  }
  if (!o.accelerator_types.empty()) {
    json types = json::array();
    std::stringstream list(o.accelerator_types);
    for (std::string t; std::getline(list, t, ',');) {
      if (!t.empty()) types.push_back(t);
    }
    body["acceleratorTypes"] = types;
  }
  if (o.strategy != "auto") body["strategy"] = o.strategy;
  if (o.tp != 0) body["tp"] = o.tp;
  if (o.ep != 0) body["ep"] = o.ep;
  if (o.cp != 0) body["cp"] = o.cp;
  if (o.microbatches != 0) body["microbatches"] = o.microbatches;
  if (o.offload_optimizer) body["offloadOptimizer"] = true;
  if (!o.remat.empty() && o.remat.front() == '{') {
    json custom = json::parse(o.remat, nullptr, /*allow_exceptions=*/false);
    if (custom.is_discarded()) return Status::InvalidArgument("--remat: not a JSON object");
    body["remat"] = custom;
  } else if (o.remat != "auto") {
    body["remat"] = o.remat;
  }
  if (o.serve) {
    json s = json::object();
    if (o.serve_batch != 0) s["batch"] = o.serve_batch;
    if (o.serve_tp != 0) s["tp"] = o.serve_tp;
    if (o.input_len != 0) s["inputLen"] = o.input_len;
    if (o.output_len != 0) s["outputLen"] = o.output_len;
    if (!o.weights.empty()) s["weights"] = o.weights;
    if (!o.kv_cache.empty()) s["kvCache"] = o.kv_cache;
    if (!o.serve_engine.empty()) s["engine"] = o.serve_engine;
    if (o.cache_len != 0) s["cacheLen"] = o.cache_len;
    if (o.chunk_tokens != 0) s["chunkTokens"] = o.chunk_tokens;
    if (o.shard_on_batch) s["shardOnBatch"] = true;
    body["serving"] = s;
  }
  if (o.detail) body["detail"] = true;
  if (!o.prices.empty()) {
    Result<json> prices = ReadJsonFile("--prices", o.prices);
    if (!prices.ok()) return prices.status();
    body["prices"] = *prices;
  }
  return body;
}

}  // namespace

CLI::App* AddCompareCommand(CLI::App& app, CompareCliOptions& o) {
  CLI::App* c = app.add_subcommand(
      "compare", "Which TPU for a model: step time, memory fit and cost on every accelerator type");
  c->add_option("--request", o.request, "a JSON request file (the POST /_emulator/compare body)");
  c->add_option("--model", o.model,
                "a preset: llama2-7b, llama2-13b, llama2-70b, llama3-8b, llama3-70b, "
                "mixtral-8x7b, mixtral-8x22b");
  c->add_option("--layers", o.layers, "decoder layers");
  c->add_option("--d-model", o.d_model, "model width");
  c->add_option("--heads", o.heads, "attention heads");
  c->add_option("--kv-heads", o.kv_heads, "key/value heads (default: heads)");
  c->add_option("--head-dim", o.head_dim, "head width (default: d-model / heads)");
  c->add_option("--ffn", o.ffn, "MLP hidden width");
  c->add_option("--vocab", o.vocab, "vocabulary size");
  c->add_option("--seq-len", o.seq_len, "sequence length");
  c->add_option("--global-batch", o.global_batch, "sequences per step");
  c->add_flag("--no-gated-mlp", o.no_gated_mlp, "two MLP matrices instead of SwiGLU's three");
  c->add_option("--experts", o.experts, "mixture of experts: experts per layer");
  c->add_option("--top-k", o.top_k, "mixture of experts: experts per token");
  c->add_option("--shared-experts", o.shared_experts, "experts every token goes through");
  c->add_option("--capacity-factor", o.capacity_factor,
                "token dropping: rows per expert x tokens·topK/experts (0: dropless)");
  c->add_option("--program", o.program, "a JSON IR program file (engine/frontend/program_json.h)");
  c->add_option("--hlo", o.hlo, "an HLO text module file (as JAX or XLA_FLAGS dumps print it)");
  c->add_flag("--allow-unsupported", o.allow_unsupported,
              "with --hlo: price unsupported instructions at zero instead of failing");
  c->add_option("--batch", o.batch,
                "the program's or module's global batch (default: from its first input)");
  c->add_option("--accelerator-types", o.accelerator_types,
                "types or generations, comma-separated (default: all)");
  c->add_option("--strategy", o.strategy, "auto|dp|fsdp|tp (default auto: fastest that fits)");
  c->add_option("--tp", o.tp, "tensor-parallel degree with --strategy tp");
  c->add_option("--ep", o.ep, "expert-parallel degree (mixture of experts, fsdp)");
  c->add_option("--cp", o.cp, "context-parallel degree (fsdp): chips sharing each sequence");
  c->add_option("--microbatches", o.microbatches, "gradient accumulation steps");
  c->add_flag("--offload-optimizer", o.offload_optimizer, "Adam's moments in host memory");
  c->add_option("--remat", o.remat,
                "auto, a MaxText policy (none, minimal, full, save_dot_except_mlpwi, "
                "save_dot_except_mlp, save_qkv_proj, save_out_proj, qkv_proj_offloaded, "
                "minimal_offloaded) or a custom one as JSON (model shapes only)");
  c->add_flag("--serve", o.serve, "also price serving the model (prefill, decode, $/1M tokens)");
  c->add_option("--serve-batch", o.serve_batch, "serving: concurrent sequences (default: most)");
  c->add_option("--serve-tp", o.serve_tp, "serving: chips per model replica (default: cheapest)");
  c->add_option("--input-len", o.input_len, "serving: prompt tokens (default 1024)");
  c->add_option("--output-len", o.output_len, "serving: output tokens (default 1024)");
  c->add_option("--weights", o.weights, "serving: bf16|int8 weights (default bf16)");
  c->add_option("--kv-cache", o.kv_cache, "serving: bf16|int8 KV cache (default bf16)");
  c->add_option("--serve-engine", o.serve_engine,
                "serving: jetstream (static KV cache) | vllm (paged, chunked prefill) | ideal "
                "(the chip alone); default jetstream");
  c->add_option("--cache-len", o.cache_len,
                "serving, jetstream: static KV cache tokens per slot (default input + output)");
  c->add_option("--chunk-tokens", o.chunk_tokens,
                "serving, vllm/ideal: tokens per engine step (--max-num-batched-tokens; 2048)");
  c->add_flag("--shard-on-batch", o.shard_on_batch,
              "serving, jetstream: one engine over the slice, batch sharded over the replicas");
  c->add_option("--prices", o.prices, "a JSON price override (engine/cost/price_table.h)");
  c->add_flag("--detail", o.detail, "every plan evaluated, per type (json)");
  c->add_option("--format", o.format, "table|json|csv (default table)");
  return c;
}

Result<std::string> RunCompare(const CompareCliOptions& o) {
  if (o.format != "table" && o.format != "json" && o.format != "csv") {
    return Status::InvalidArgument("--format: unknown format '" + o.format +
                                   "' (expected table, json or csv)");
  }
  Result<json> body = RequestBody(o);
  if (!body.ok()) return body.status();
  Result<engine::cost::CompareRequest> request = engine::cost::ParseCompareRequest(*body);
  if (!request.ok()) return request.status();
  Result<engine::cost::Comparison> comparison =
      engine::cost::Compare(request->source, request->options);
  if (!comparison.ok()) return comparison.status();
  if (o.format == "json") {
    return engine::cost::ComparisonToJson(*comparison, request->options.prices).dump(2) + "\n";
  }
  if (o.format == "csv") return engine::cost::ComparisonToCsv(*comparison);
  return engine::cost::ComparisonToTable(*comparison);
}

}  // namespace tpuemu::cli
