#include "engine/cost/transformer_shape.h"

#include <algorithm>
#include <array>
#include <string_view>

namespace tpuemu::engine::cost {
namespace {

using nlohmann::json;

// Meta's and Mistral's published shapes, as MaxText's configs/models/*.yml spell them
// (mixtral-8x7b.yml, mixtral-8x22b.yml: 8 experts, top 2; MaxText's capacity_factor default -1
// is dropless).
struct Preset {
  std::string_view name;
  TransformerShape shape;
};
const std::array<Preset, 9>& Presets() {
  static const std::array<Preset, 9> presets = {{
      {"llama2-7b", {"llama2-7b", 32, 4096, 32, 32, 128, 11008, 32000, 4096, 256, true}},
      {"llama2-13b", {"llama2-13b", 40, 5120, 40, 40, 128, 13824, 32000, 4096, 256, true}},
      {"llama2-70b", {"llama2-70b", 80, 8192, 64, 8, 128, 28672, 32000, 4096, 256, true}},
      {"llama3-8b", {"llama3-8b", 32, 4096, 32, 8, 128, 14336, 128256, 8192, 256, true}},
      {"llama3-70b", {"llama3-70b", 80, 8192, 64, 8, 128, 28672, 128256, 8192, 256, true}},
      {"mixtral-8x7b",
       {"mixtral-8x7b", 32, 4096, 32, 8, 128, 14336, 32000, 4096, 256, true, 8, 2, 0, 0}},
      {"mixtral-8x22b",
       {"mixtral-8x22b", 56, 6144, 48, 8, 128, 16384, 32768, 4096, 256, true, 8, 2, 0, 0}},
      // MaxText configs/models/gemma-2b.yml, gemma-7b.yml: gelu x linear MLP (three matrices),
      // logits_via_embedding.
      {"gemma-2b",
       {"gemma-2b", 18, 2048, 8, 1, 256, 16384, 256128, 8192, 256, true, 0, 0, 0, 0, true}},
      {"gemma-7b",
       {"gemma-7b", 28, 3072, 16, 16, 256, 24576, 256128, 8192, 256, true, 0, 0, 0, 0, true}},
  }};
  return presets;
}

constexpr int64_t kMaxTokensPerStep = int64_t{1} << 33;

Status BadModelField(const std::string& field, const std::string& what) {
  return Status::InvalidArgument("model." + field + " " + what);
}

Status ReadInt(const json& model, const char* field, int64_t lo, int64_t hi, int64_t* out) {
  if (!model.contains(field)) return Status::Ok();
  const json& v = model[field];
  if (!v.is_number_integer() || v.get<int64_t>() < lo || v.get<int64_t>() > hi) {
    return BadModelField(field,
                         "must be an integer in " + std::to_string(lo) + ".." + std::to_string(hi));
  }
  *out = v.get<int64_t>();
  return Status::Ok();
}

}  // namespace

std::vector<std::string> TransformerPresets() {
  std::vector<std::string> names;
  for (const Preset& p : Presets()) names.emplace_back(p.name);
  return names;
}

Result<TransformerShape> ParseTransformerShape(const json& model, ShapeUse use) {
  if (!model.is_object()) return Status::InvalidArgument("model must be an object");
  static const std::array<const char*, 17> kKnown = {
      "preset",  "layers", "dModel",        "heads",          "kvHeads",       "headDim",
      "ffn",     "vocab",  "seqLen",        "globalBatch",    "gatedMlp",      "name",
      "experts", "topK",   "sharedExperts", "capacityFactor", "tiedEmbeddings"};
  for (const auto& item : model.items()) {
    const std::string& key = item.key();
    if (std::find_if(kKnown.begin(), kKnown.end(), [&](const char* k) { return key == k; }) ==
        kKnown.end()) {
      return BadModelField(key,
                           "is not a known field (expected preset, layers, dModel, heads, kvHeads, "
                           "headDim, ffn, vocab, seqLen, globalBatch, gatedMlp, experts, topK, "
                           "sharedExperts, capacityFactor, tiedEmbeddings)");
    }
  }
  TransformerShape s;
  s.name = "custom";
  if (model.contains("preset")) {
    const json& p = model["preset"];
    const auto found = std::find_if(Presets().begin(), Presets().end(), [&](const Preset& x) {
      return p.is_string() && p.get<std::string>() == x.name;
    });
    if (found == Presets().end()) {
      std::string names;
      for (const std::string& n : TransformerPresets()) names += (names.empty() ? "" : ", ") + n;
      return BadModelField("preset", "must be one of " + names);
    }
    s = found->shape;
  }
  if (model.contains("name")) {
    if (!model["name"].is_string()) return BadModelField("name", "must be a string");
    s.name = model["name"].get<std::string>();
  }
  const int64_t heads_before = s.heads, d_before = s.d_model;
  // The bounds keep every per-chip GEMM's fold count x stream length (engine/chip/timing.h, int64)
  // far from overflow; they are well above any model trained today.
  TPUEMU_RETURN_IF_ERROR(ReadInt(model, "layers", 1, 1000, &s.layers));
  TPUEMU_RETURN_IF_ERROR(ReadInt(model, "dModel", 1, 65536, &s.d_model));
  TPUEMU_RETURN_IF_ERROR(ReadInt(model, "heads", 1, 1024, &s.heads));
  if (s.heads != heads_before && !model.contains("kvHeads")) s.kv_heads = 0;
  if ((s.heads != heads_before || s.d_model != d_before) && !model.contains("headDim")) {
    s.head_dim = 0;
  }
  TPUEMU_RETURN_IF_ERROR(ReadInt(model, "kvHeads", 1, 1024, &s.kv_heads));
  TPUEMU_RETURN_IF_ERROR(ReadInt(model, "headDim", 1, 1024, &s.head_dim));
  TPUEMU_RETURN_IF_ERROR(ReadInt(model, "ffn", 1, 262144, &s.ffn));
  TPUEMU_RETURN_IF_ERROR(ReadInt(model, "vocab", 1, 1048576, &s.vocab));
  TPUEMU_RETURN_IF_ERROR(ReadInt(model, "seqLen", 1, 1048576, &s.seq_len));
  TPUEMU_RETURN_IF_ERROR(ReadInt(model, "globalBatch", 1, 1048576, &s.global_batch));
  TPUEMU_RETURN_IF_ERROR(ReadInt(model, "experts", 0, 1024, &s.experts));
  TPUEMU_RETURN_IF_ERROR(ReadInt(model, "topK", 1, 1024, &s.top_k));
  TPUEMU_RETURN_IF_ERROR(ReadInt(model, "sharedExperts", 0, 64, &s.shared_experts));
  if (model.contains("capacityFactor")) {
    const json& cf = model["capacityFactor"];
    if (!cf.is_number() || cf.get<double>() < 0 || cf.get<double>() > 64) {
      return BadModelField("capacityFactor", "must be a number in 0..64 (0: dropless)");
    }
    s.capacity_factor = cf.get<double>();
  }
  if (s.Moe()) {
    if (s.top_k == 0) s.top_k = 1;
    if (s.top_k > s.experts) {
      return BadModelField("topK", "must be at most experts (" + std::to_string(s.experts) + ")");
    }
  } else {
    s.top_k = 0;
    s.shared_experts = 0;
    s.capacity_factor = 0;
  }
  if (model.contains("tiedEmbeddings")) {
    if (!model["tiedEmbeddings"].is_boolean()) {
      return BadModelField("tiedEmbeddings", "must be true or false");
    }
    s.tied_embeddings = model["tiedEmbeddings"].get<bool>();
  }
  if (model.contains("gatedMlp")) {
    if (!model["gatedMlp"].is_boolean()) return BadModelField("gatedMlp", "must be true or false");
    s.gated_mlp = model["gatedMlp"].get<bool>();
  }
  for (const auto& [field, value] : {std::pair{"layers", s.layers},
                                     {"dModel", s.d_model},
                                     {"heads", s.heads},
                                     {"ffn", s.ffn},
                                     {"vocab", s.vocab},
                                     {"seqLen", s.seq_len},
                                     {"globalBatch", s.global_batch}}) {
    const bool training_only =
        std::string_view(field) == "seqLen" || std::string_view(field) == "globalBatch";
    if (value <= 0 && !(training_only && use == ShapeUse::kServingOnly)) {
      return BadModelField(field, "is required (or give a preset)");
    }
  }
  if (s.global_batch * s.seq_len > kMaxTokensPerStep) {
    return BadModelField("globalBatch", "x seqLen must be at most " +
                                            std::to_string(kMaxTokensPerStep) + " tokens per step");
  }
  if (s.kv_heads == 0) s.kv_heads = s.heads;
  if (s.head_dim == 0) {
    if (s.d_model % s.heads != 0 || s.d_model / s.heads > 1024) {
      return BadModelField("headDim",
                           "is required when dModel / heads (" + std::to_string(s.d_model) + " / " +
                               std::to_string(s.heads) + ") is not a whole number up to 1024");
    }
    s.head_dim = s.d_model / s.heads;
  }
  if (s.heads % s.kv_heads != 0) {
    return BadModelField("kvHeads", "must divide heads (" + std::to_string(s.heads) + "), got " +
                                        std::to_string(s.kv_heads));
  }
  return s;
}

}  // namespace tpuemu::engine::cost
