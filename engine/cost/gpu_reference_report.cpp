#include "engine/cost/gpu_reference_report.h"

#include <algorithm>
#include <sstream>

#include "engine/cost/number_text.h"

namespace tpuemu::engine::cost {
namespace {

using Json = nlohmann::ordered_json;

std::string GpuDollars(double v) { return Number(v, v < 0.01 ? "%.2e" : "%.3f"); }

std::string GpuRate(double v) {
  if (v >= 1e6) return Number(v / 1e6, "%.2fM");
  if (v >= 1e3) return Number(v / 1e3, "%.1fk");
  return Number(v, "%.1f");
}

std::string GpuMillis(double s) { return Number(s * 1e3, s < 0.01 ? "%.2f ms" : "%.1f ms"); }

}  // namespace

Json GpuReferenceJson(const std::vector<GpuReferenceRow>& rows) {
  Json out = Json::array();
  for (const GpuReferenceRow& r : rows) {
    const GpuSpec& g = r.spec;
    Json j = {{"gpu", g.name},
              {"machineType", g.machine_type},
              {"gpus", g.gpus},
              {"outsideTpuModel", true},
              {"note",
               "context, not emulated: published peak, price and efficiency figures, outside "
               "tpuemu's TPU model"},
              {"peakBf16Flops", g.peak_bf16_flops},
              {"hbmBytes", g.hbm_bytes},
              {"hbmBytesPerSecond", g.hbm_bytes_per_second},
              {"specSource", g.spec_source},
              {"prices",
               {{"unit", "USD per GPU-hour"},
                {"onDemand", g.on_demand_usd_per_gpu_hour},
                {"spot", g.spot_usd_per_gpu_hour},
                {"region", g.region},
                {"source", g.price_source},
                {"asOf", g.price_as_of}}},
              {"assumed",
               {{"trainingMfu", g.training_mfu},
                {"mfuSource", g.mfu_source},
                {"servingMbu", g.serving_mbu},
                {"mbuSource", g.mbu_source},
                {"usableHbm", g.usable_hbm},
                {"maxNumSeqs", g.max_num_seqs},
                {"engineSource", g.engine_source}}}};
    j["training"] = nullptr;
    if (r.training) {
      const GpuTraining& t = *r.training;
      j["training"] = {{"stepSeconds", t.step_seconds},
                       {"unitsPerSecond", t.units_per_second},
                       {"unitsPerSecondPerGpu", t.units_per_second_per_gpu},
                       {"mfu", g.training_mfu},
                       {"usdPerMillionUnits",
                        {{"onDemand", t.usd_per_million_units_on_demand},
                         {"spot", t.usd_per_million_units_spot}}},
                       {"stateBytesPerGpu", t.state_bytes_per_gpu},
                       {"fits", t.fits},
                       {"problem", t.problem}};
    }
    j["serving"] = nullptr;
    if (r.serving) {
      const GpuServing& v = *r.serving;
      const bool priced = v.max_batch >= 1;
      const auto number = [&](double x) { return priced ? Json(x) : Json(nullptr); };
      j["serving"] = {
          {"fits", v.fits},
          {"problem", v.problem},
          {"tp", v.tp},
          {"replicas", v.replicas},
          {"batch", v.batch},
          {"maxBatch", v.max_batch},
          {"hbmPerGpu",
           {{"weights", v.weights_bytes_per_gpu},
            {"kvCache", v.kv_bytes_per_gpu},
            {"capacity", g.hbm_bytes * g.usable_hbm}}},
          {"prefillSeconds", number(v.prefill_seconds)},
          {"decodeStepSeconds", number(v.decode_step_seconds)},
          {"outputTokensPerSecondPerGpu", number(v.output_tokens_per_second_per_gpu)},
          {"outputTokensPerSecond", number(v.output_tokens_per_second_per_gpu * g.gpus)},
          {"decodeBound", priced ? Json(v.decode_bound) : Json(nullptr)},
          {"usdPerMillionOutputTokens",
           {{"onDemand", number(v.usd_per_million_output_tokens_on_demand)},
            {"spot", number(v.usd_per_million_output_tokens_spot)}}}};
    }
    out.push_back(std::move(j));
  }
  return out;
}

std::string GpuReferenceTable(const std::vector<GpuReferenceRow>& rows, const std::string& unit) {
  if (rows.empty()) return "";
  const std::string u = unit == "tokens" ? "tok" : unit;
  std::vector<std::vector<std::string>> cells = {{"GPU", "MACHINE", "STEP", u + "/s/GPU", "MFU*",
                                                  "$/1M " + u, "SERVE OUT tok/s/GPU", "TPOT",
                                                  "TTFT", "$/1M OUT", "NOTE"}};
  for (const GpuReferenceRow& r : rows) {
    std::vector<std::string> row = {r.spec.name, r.spec.machine_type};
    std::string note;
    if (r.training) {
      const GpuTraining& t = *r.training;
      row.insert(row.end(),
                 {t.step_seconds < 1 ? GpuMillis(t.step_seconds) : Number(t.step_seconds, "%.2f s"),
                  GpuRate(t.units_per_second_per_gpu), Number(r.spec.training_mfu * 100, "%.0f%%"),
                  GpuDollars(t.usd_per_million_units_on_demand)});
      note = t.problem;
    } else {
      row.insert(row.end(), {"-", "-", "-", "-"});
    }
    if (r.serving && r.serving->max_batch >= 1) {
      const GpuServing& v = *r.serving;
      row.insert(row.end(), {Number(v.output_tokens_per_second_per_gpu, "%.0f"),
                             GpuMillis(v.decode_step_seconds), GpuMillis(v.prefill_seconds),
                             GpuDollars(v.usd_per_million_output_tokens_on_demand)});
    } else {
      row.insert(row.end(), {"-", "-", "-", "-"});
    }
    if (r.serving && !r.serving->problem.empty()) {
      note += (note.empty() ? "" : "; ") + std::string("serving: ") + r.serving->problem;
    }
    row.push_back(note);
    cells.push_back(std::move(row));
  }
  std::vector<size_t> widths(cells.front().size(), 0);
  for (const auto& row : cells) {
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  std::ostringstream out;
  out << "GPUs for context, OUTSIDE the TPU model (published figures, not emulated; one "
      << rows.front().spec.gpus << "-GPU machine each):\n";
  for (const auto& row : cells) {
    for (size_t i = 0; i < row.size(); ++i) {
      out << row[i];
      if (i + 1 < row.size()) out << std::string(widths[i] - row[i].size() + 2, ' ');
    }
    out << "\n";
  }
  const GpuSpec& g = rows.front().spec;
  out << "* assumed: " << g.mfu_source << ". Serving: decode at "
      << Number(g.serving_mbu * 100, "%.0f") << "% of HBM bandwidth, " << g.mbu_source
      << ". Prices: USD per GPU-hour on demand, "
      << "Google Cloud Billing Catalog API (gpuReference[].prices in --format json).\n";
  return out.str();
}

}  // namespace tpuemu::engine::cost
