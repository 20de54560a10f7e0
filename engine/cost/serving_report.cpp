#include "engine/cost/serving_report.h"

#include <algorithm>
#include <sstream>
#include <vector>

#include "engine/cost/number_text.h"

namespace tpuemu::engine::cost {
namespace {

using Json = nlohmann::ordered_json;

std::string Millis(double s) { return Number(s * 1e3, s < 0.01 ? "%.2f ms" : "%.1f ms"); }

}  // namespace

Json ServingJson(const ServingEstimate& v) {
  Json j = {{"engine", v.engine},
            {"fits", v.fits},
            {"problem", v.problem},
            {"chips", v.chips},
            {"tp", v.tp},
            {"replicas", v.replicas},
            {"batch", v.batch},
            {"maxBatch", v.max_batch},
            {"kvBytesPerToken", v.kv_bytes_per_token},
            {"hbmPerChip",
             {{"weights", v.weights_bytes_per_chip},
              {"kvCache", v.kv_bytes_per_chip},
              {"capacity", v.capacity_bytes}}}};
  const bool priced = v.max_batch >= 1;
  const auto number = [&](double x) { return priced ? Json(x) : Json(nullptr); };
  j["prefillSeconds"] = number(v.prefill_seconds);
  j["decodeStepSeconds"] = number(v.decode_step_seconds);
  j["stepOverheadSeconds"] = number(v.step_overhead_seconds);
  j["prefillTokensPerSecondPerChip"] = number(v.prefill_tokens_per_second_per_chip);
  j["decodeTokensPerSecondPerChip"] = number(v.decode_tokens_per_second_per_chip);
  j["outputTokensPerSecondPerChip"] = number(v.output_tokens_per_second_per_chip);
  j["decodeBound"] = priced ? Json(v.decode_bound) : Json(nullptr);
  j["usdPerMillionOutputTokens"] = {{"onDemand", number(v.usd_per_million_output_tokens_on_demand)},
                                    {"spot", number(v.usd_per_million_output_tokens_spot)}};
  return j;
}

std::string ServingCsvHeader() {
  return "serving_fits,serving_tp,serving_replicas,serving_batch,serving_max_batch,prefill_seconds,"
         "decode_step_seconds,"
         "output_tokens_per_second_per_chip,usd_per_million_output_tokens_on_demand,"
         "usd_per_million_output_tokens_spot,serving_problem";
}

std::string ServingCsvCells(const ServingEstimate& v) {
  std::ostringstream out;
  out << (v.fits ? "true" : "false") << ',' << v.tp << ',' << v.replicas << ',' << v.batch << ','
      << v.max_batch << ',';
  if (v.max_batch >= 1) {
    for (double x :
         {v.prefill_seconds, v.decode_step_seconds, v.output_tokens_per_second_per_chip,
          v.usd_per_million_output_tokens_on_demand, v.usd_per_million_output_tokens_spot}) {
      out << Number(x, "%.6g") << ',';
    }
  } else {
    out << ",,,,,";
  }
  std::string problem = v.problem;
  std::replace(problem.begin(), problem.end(), '"', '\'');
  out << (problem.empty() ? "" : "\"" + problem + "\"");
  return out.str();
}

std::string ServingTable(const Comparison& c) {
  std::vector<std::vector<std::string>> cells = {
      {"TYPE", "TP x REPLICAS", "BATCH", "MAX BATCH", "TTFT", "TPOT", "OUT tok/s/CHIP",
       "DECODE tok/s/CHIP", "PREFILL tok/s/CHIP", "WEIGHTS+KV/CHIP", "BOUND", "$/1M OUT",
       "$/1M OUT SPOT", "NOTE"}};
  for (const TypeComparison& t : c.rows) {
    if (!t.serving) continue;
    const ServingEstimate& v = *t.serving;
    const std::string type = t.best.accelerator_type;
    if (v.max_batch < 1) {
      cells.push_back(
          {type, "-", "-", "0", "-", "-", "-", "-", "-", "-", "-", "-", "-", v.problem});
      continue;
    }
    cells.push_back({type, std::to_string(v.tp) + "x" + std::to_string(v.replicas),
                     std::to_string(v.batch), std::to_string(v.max_batch),
                     Millis(v.prefill_seconds), Millis(v.decode_step_seconds),
                     Number(v.output_tokens_per_second_per_chip, "%.0f"),
                     Number(v.decode_tokens_per_second_per_chip, "%.0f"),
                     Number(v.prefill_tokens_per_second_per_chip, "%.0f"),
                     Number((v.weights_bytes_per_chip + v.kv_bytes_per_chip) / kGiB, "%.1f") + "/" +
                         Number(v.capacity_bytes / kGiB, "%.0f") + " GiB",
                     v.decode_bound, Number(v.usd_per_million_output_tokens_on_demand, "%.3f"),
                     Number(v.usd_per_million_output_tokens_spot, "%.3f"), v.problem});
  }
  std::vector<size_t> widths(cells.front().size(), 0);
  for (const auto& row : cells) {
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  std::ostringstream out;
  const ServingOptions& o = *c.serving;
  out << "Serving " << c.name << " with " << ServingEngineName(o.engine) << ": "
      << (o.batch > 0 ? std::to_string(o.batch) : "largest") << " batch, " << o.input_len
      << " tokens in, " << o.output_len << " out, " << (o.weight_bytes == 1 ? "int8" : "bf16")
      << " weights, " << (o.kv_bytes == 1 ? "int8" : "bf16") << " KV cache"
      << (o.engine == ServingEngine::kJetStream
              ? ", static cache of " + std::to_string(o.CacheLen()) + " tokens"
              : ", paged cache, " + std::to_string(o.ChunkTokens()) + " tokens per step")
      << "; "
      << (o.tp > 0 ? "tensor parallel over " + std::to_string(o.tp) + " chips"
                   : "tensor parallel over the group that is cheapest per token")
      << ", batch per replica\n";
  for (const auto& row : cells) {
    for (size_t i = 0; i < row.size(); ++i) {
      out << row[i];
      if (i + 1 < row.size()) out << std::string(widths[i] - row[i].size() + 2, ' ');
    }
    out << "\n";
  }
  return out.str();
}

}  // namespace tpuemu::engine::cost
