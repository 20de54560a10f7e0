#include "engine/cost/compare_report.h"

#include <algorithm>
#include <sstream>
#include <vector>

#include "engine/cost/gpu_reference_report.h"
#include "engine/cost/number_text.h"
#include "engine/cost/serving_report.h"
#include "engine/hardware/hardware.h"

namespace tpuemu::engine::cost {
namespace {

using Json = nlohmann::ordered_json;

std::string PlanText(const Estimate& e) {
  std::string s(StrategyName(e.plan.strategy));
  if (e.plan.strategy == Strategy::kTensorParallel) {
    s += " " + std::to_string(e.plan.tp);
    if (e.replicas > 1) s += "x" + std::to_string(e.replicas) + " fsdp";
  }
  if (e.plan.ep > 1) s += " ep " + std::to_string(e.plan.ep);
  if (e.plan.cp > 1) s += " cp " + std::to_string(e.plan.cp);
  if (e.plan.microbatches > 1) s += " ga " + std::to_string(e.plan.microbatches);
  if (e.plan.offload_optimizer) s += " opt>host";
  return s;
}

Json MoneyJson(const Money& m) {
  return {
      {"perStep", m.per_step}, {"perHour", m.per_hour}, {"perMillionUnits", m.per_million_units}};
}

Json EstimateJson(const Estimate& e) {
  Json j = {{"acceleratorType", e.accelerator_type},
            {"generation", std::string(Spec(e.generation).name)},
            {"chips", e.chips},
            {"strategy", std::string(StrategyName(e.plan.strategy))},
            {"tp", e.plan.tp},
            {"ep", e.plan.ep},
            {"cp", e.plan.cp},
            {"microbatches", e.plan.microbatches},
            {"offloadOptimizer", e.plan.offload_optimizer},
            {"plan", PlanText(e)},
            {"remat", e.remat},
            {"feasible", e.feasible},
            {"fits", e.fits},
            {"problem", e.problem}};
  if (!e.feasible) {
    for (const char* key : {"stepSeconds", "unitsPerSecond", "unitsPerSecondPerChip", "mfu"}) {
      j[key] = nullptr;
    }
    return j;
  }
  j["replicas"] = e.replicas;
  j["batchPerReplica"] = e.batch_per_replica;
  j["stepSeconds"] = e.step_seconds;
  j["unitsPerSecond"] = e.units_per_second;
  j["unitsPerSecondPerChip"] = e.units_per_second_per_chip;
  j["mfu"] = e.mfu;
  const MemoryPerChip& m = e.memory;
  j["hbmPerChip"] = {{"weights", m.weights},
                     {"gradients", m.gradients},
                     {"optimizer", m.optimizer},
                     {"activations", m.activations},
                     {"working", m.working},
                     {"total", m.total},
                     {"capacity", m.capacity},
                     {"host", m.host},
                     {"rematerializedByXla", m.rematerialized}};
  j["bottleneck"] = e.bottleneck;
  j["secondsBy"] = {{"mxu", e.mxu_seconds},
                    {"hbm", e.hbm_seconds},
                    {"vector", e.vector_seconds},
                    {"ici", e.ici_seconds},
                    {"host", e.host_seconds},
                    {"collectivesTotal", e.collective_seconds},
                    {"hostTransferTotal", e.host_transfer_seconds}};
  j["onDemand"] = MoneyJson(e.on_demand);
  j["spot"] = MoneyJson(e.spot);
  return j;
}

// Seconds in the unit that reads best.
std::string Seconds(double s) {
  if (s < 1e-3) return Number(s * 1e6, "%.1f us");
  if (s < 1) return Number(s * 1e3, "%.1f ms");
  return Number(s, "%.2f s");
}

std::string Rate(double v) {
  if (v >= 1e6) return Number(v / 1e6, "%.2fM");
  if (v >= 1e3) return Number(v / 1e3, "%.1fk");
  return Number(v, "%.1f");
}

std::string Dollars(double v) {
  if (v == 0) return "0";
  if (v < 0.01) return Number(v, "%.2e");
  return Number(v, v < 100 ? "%.3f" : "%.0f");
}

}  // namespace

Json ComparisonToJson(const Comparison& c, const PriceTable& prices, const Efficiency& eff) {
  Json rows = Json::array();
  for (const TypeComparison& t : c.rows) {
    Json row = EstimateJson(t.best);
    if (!t.plans.empty()) {
      Json plans = Json::array();
      for (const Estimate& e : t.plans) plans.push_back(EstimateJson(e));
      row["plans"] = std::move(plans);
    }
    if (t.serving) row["serving"] = ServingJson(*t.serving);
    rows.push_back(std::move(row));
  }
  Json serving = nullptr;
  if (c.serving) serving = Json(nlohmann::json(ServingOptionsToJson(*c.serving)));
  return {{"name", c.name},
          {"source", c.source},
          {"unit", c.unit},
          {"unitsPerStep", c.units_per_step},
          {"globalBatch", c.global_batch},
          {"modelFlopsPerStep", c.model_flops},
          {"parameters", c.parameters},
          {"plansEvaluated", c.plans_evaluated},
          {"efficiency",
           {{"mxu", eff.mxu},
            {"hbm", eff.hbm},
            {"ici", eff.ici},
            {"iciHopSeconds", eff.ici_hop_seconds},
            {"softmaxOpsForward", eff.softmax_ops_forward},
            {"softmaxOpsBackward", eff.softmax_ops_backward},
            {"tpOverlap", eff.tp_overlap},
            {"usableHbm", eff.usable_hbm},
            {"host", eff.host},
            {"servingHbmInt8", eff.serving_hbm_int8},
            {"jetstreamStepSeconds", eff.jetstream_step_seconds},
            {"jetstreamSequenceStepSeconds", eff.jetstream_sequence_step_seconds},
            {"vllmStepSeconds", eff.vllm_step_seconds}}},
          {"serving", serving},
          {"prices", Json(nlohmann::json(prices.ToJson()))},
          {"rows", rows},
          {"gpuReference", GpuReferenceJson(c.gpu_reference)}};
}

std::string ComparisonToCsv(const Comparison& c) {
  std::ostringstream out;
  const std::string u = c.unit;
  out << "accelerator_type,generation,chips,strategy,tp,remat,fits,step_seconds," << u
      << "_per_second," << u << "_per_second_per_chip,mfu,hbm_weights_bytes,hbm_gradients_bytes,"
      << "hbm_optimizer_bytes,hbm_activations_bytes,hbm_working_bytes,hbm_total_bytes,"
      << "hbm_capacity_bytes,bottleneck,usd_per_step_on_demand,usd_per_hour_on_demand,"
      << "usd_per_million_" << u << "_on_demand,usd_per_step_spot,usd_per_hour_spot,"
      << "usd_per_million_" << u << "_spot,problem" << (c.serving ? "," + ServingCsvHeader() : "")
      << "\n";
  for (const TypeComparison& t : c.rows) {
    const Estimate& e = t.best;
    out << e.accelerator_type << ',' << Spec(e.generation).name << ',' << e.chips << ','
        << StrategyName(e.plan.strategy) << ',' << e.plan.tp << ',' << e.remat << ','
        << (e.fits ? "true" : "false") << ',';
    if (e.feasible) {
      const MemoryPerChip& m = e.memory;
      for (double v :
           {e.step_seconds, e.units_per_second, e.units_per_second_per_chip, e.mfu, m.weights,
            m.gradients, m.optimizer, m.activations, m.working, m.total, m.capacity}) {
        out << Number(v, "%.6g") << ',';
      }
      out << e.bottleneck << ',';
      for (double v : {e.on_demand.per_step, e.on_demand.per_hour, e.on_demand.per_million_units,
                       e.spot.per_step, e.spot.per_hour, e.spot.per_million_units}) {
        out << Number(v, "%.6g") << ',';
      }
    } else {
      out << std::string(18, ',');
    }
    std::string problem = e.problem;
    std::replace(problem.begin(), problem.end(), '"', '\'');
    out << (problem.empty() ? "" : "\"" + problem + "\"");
    if (t.serving) out << "," << ServingCsvCells(*t.serving);
    out << "\n";
  }
  return out.str();
}

std::string ComparisonToTable(const Comparison& c) {
  const std::string u = c.unit == "tokens" ? "tok" : "samples";
  std::vector<std::vector<std::string>> cells = {
      {"TYPE", "CHIPS", "PLAN", "REMAT", "STEP", u + "/s/CHIP", u + "/s", "MFU", "HBM/CHIP",
       "BOUND", "$/STEP", "$/HOUR", "$/1M " + u, "$/1M SPOT", "NOTE"}};
  for (const TypeComparison& t : c.rows) {
    const Estimate& e = t.best;
    if (!e.feasible) {
      cells.push_back({e.accelerator_type, std::to_string(e.chips), PlanText(e), e.remat, "-", "-",
                       "-", "-", "-", "-", "-", "-", "-", "-", e.problem});
      continue;
    }
    cells.push_back({e.accelerator_type, std::to_string(e.chips), PlanText(e), e.remat,
                     Seconds(e.step_seconds), Rate(e.units_per_second_per_chip),
                     Rate(e.units_per_second), Number(e.mfu * 100, "%.1f%%"),
                     Number(e.memory.total / kGiB, "%.1f") + "/" +
                         Number(e.memory.capacity / kGiB, "%.0f") + " GiB",
                     e.bottleneck, Dollars(e.on_demand.per_step), Dollars(e.on_demand.per_hour),
                     Dollars(e.on_demand.per_million_units), Dollars(e.spot.per_million_units),
                     e.fits ? "" : e.problem});
  }
  std::vector<size_t> widths(cells.front().size(), 0);
  for (const auto& row : cells) {
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  std::ostringstream out;
  out << c.name << " (" << c.source << "): " << Number(c.parameters / 1e9, "%.2f")
      << "B parameters, " << Number(c.units_per_step, "%.0f") << " " << c.unit << " per step, "
      << Number(c.model_flops / 1e15, "%.1f") << " PFLOP per step (" << c.plans_evaluated
      << " plans evaluated)\n";
  for (const auto& row : cells) {
    for (size_t i = 0; i < row.size(); ++i) {
      out << row[i];
      if (i + 1 < row.size()) out << std::string(widths[i] - row[i].size() + 2, ' ');
    }
    out << "\n";
  }
  if (c.serving) out << "\n" << ServingTable(c);
  if (!c.gpu_reference.empty()) out << "\n" << GpuReferenceTable(c.gpu_reference, c.unit);
  return out.str();
}

}  // namespace tpuemu::engine::cost
