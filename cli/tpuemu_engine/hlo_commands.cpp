#include "cli/tpuemu_engine/hlo_commands.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/tpuemu_engine/estimate.h"
#include "cli/tpuemu_engine/report_table.h"
#include "engine/hlo/npy.h"
#include "engine/hlo/program.h"
#include "engine/stablehlo/import.h"

namespace tpuemu::cli {
namespace {

using Report = nlohmann::ordered_json;
namespace hlo = engine::hlo;

Status Flag(std::string_view flag, const Status& status) {
  return Status(status.code(), std::string(flag) + ": " + status.message());
}

Result<std::string> ReadHlo(const std::string& path, const hlo::Limits& limits) {
  if (path.empty()) return Status::InvalidArgument("--hlo: a file is required");
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound("--hlo: cannot open '" + path + "'");
  std::string text;
  char buf[1 << 16];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    text.append(buf, static_cast<size_t>(in.gcount()));
    // One byte past the limit is enough for the engine to report it.
    if (static_cast<int64_t>(text.size()) > limits.max_text_bytes) break;
  }
  return text;
}

struct Setup {
  engine::Slice slice;
  engine::Precision precision;
  engine::TimingMode timing;
};

Result<Setup> Prepare(const HloOptions& o) {
  if (o.format != "table" && o.format != "json") {
    return Status::InvalidArgument("--format: unknown format '" + o.format +
                                   "' (expected table or json)");
  }
  if (o.top < 0) return Status::InvalidArgument("--top: must be 0 (all) or a positive count");
  auto precision = engine::ParsePrecision(o.precision);
  if (!precision.ok()) return Flag("--precision", precision.status());
  auto timing = engine::ParseTimingMode(o.timing);
  if (!timing.ok()) return Flag("--timing", timing.status());
  const std::string type =
      o.accelerator_type.empty() ? kDefaultAcceleratorType : o.accelerator_type;
  auto slice = engine::Slice::FromAcceleratorType(type);
  if (!slice.ok()) return Flag("--accelerator-type", slice.status());
  return Setup{*slice, *precision, *timing};
}

// Appends the cost fields and the per-instruction rows to r.
void AddCostReport(Report& r, const hlo::ModuleCost& c, int top, bool json) {
  r["module"] = c.module;
  r["accelerator_type"] = c.accelerator_type;
  r["devices"] = c.devices;
  r["tensorcores_per_device"] = c.tensorcores_per_device;
  r["clock_hz"] = c.clock_hz;
  r["cycles"] = c.cycles;
  r["seconds"] = c.seconds;
  r["flops"] = c.flops;
  r["mxu_flops"] = c.mxu_flops;
  r["mxu_utilization"] = c.mxu_utilization;
  r["hbm_bytes"] = c.hbm_bytes;
  r["peak_hbm_bytes_per_tensorcore"] = c.peak_hbm_bytes_per_tensorcore;
  r["hbm_capacity_bytes_per_tensorcore"] = c.hbm_capacity_bytes_per_tensorcore;
  r["fits"] = c.fits;
  r["instructions_priced"] = c.rows.size();
  if (json) {
    r["warnings"] = c.warnings;
  } else {
    for (size_t i = 0; i < c.warnings.size(); ++i)
      r["warning_" + std::to_string(i + 1)] = c.warnings[i];
  }
  std::vector<const hlo::InstructionCost*> rows;
  for (const hlo::InstructionCost& row : c.rows) rows.push_back(&row);
  std::stable_sort(rows.begin(), rows.end(), [](const auto* a, const auto* b) {
    return a->cycles * a->count > b->cycles * b->count;
  });
  if (top > 0 && rows.size() > static_cast<size_t>(top)) rows.resize(static_cast<size_t>(top));
  Report per_op = Report::array();
  for (const hlo::InstructionCost* row : rows) {
    const double total = static_cast<double>(row->cycles * row->count);
    per_op.push_back({{"instruction", "%" + row->name},
                      {"opcode", row->opcode},
                      {"op_name", row->op_name},
                      {"unit", row->unit},
                      {"count", row->count},
                      {"cycles", row->cycles},
                      {"total_cycles", row->cycles * row->count},
                      {"share", c.cycles > 0 ? total / static_cast<double>(c.cycles) : 0.0},
                      {"flops", row->flops},
                      {"hbm_bytes", row->hbm_bytes},
                      {"passes", row->passes},
                      {"bound", row->bound}});
  }
  r["per_instruction"] = std::move(per_op);
}

std::string Render(const Report& r, const std::string& format) {
  return format == "json" ? r.dump(2) + "\n" : RenderTable(r);
}

Result<std::pair<int64_t, std::vector<double>>> ParseValue(const std::string& spec) {
  const size_t eq = spec.find('=');
  auto bad = [&] {
    return Status::InvalidArgument(
        "--value: expected N=v0,v1,... (parameter number and values), got '" + spec + "'");
  };
  if (eq == std::string::npos || eq == 0) return bad();
  char* end = nullptr;
  const long long n = std::strtoll(spec.c_str(), &end, 10);
  if (end != spec.c_str() + eq || n < 0) return bad();
  std::vector<double> values;
  std::stringstream list(spec.substr(eq + 1));
  std::string item;
  while (std::getline(list, item, ',')) {
    const double v = std::strtod(item.c_str(), &end);
    if (item.empty() || end != item.c_str() + item.size()) return bad();
    values.push_back(v);
  }
  if (values.empty()) return bad();
  return std::make_pair(static_cast<int64_t>(n), std::move(values));
}

Status WriteOutputs(const std::string& dir, const std::vector<hlo::Value>& outputs) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    return Status::InvalidArgument("--output-dir: cannot create '" + dir + "': " + ec.message());
  for (size_t d = 0; d < outputs.size(); ++d) {
    std::vector<const hlo::Array*> leaves;
    outputs[d].CollectArrays(leaves);
    for (size_t l = 0; l < leaves.size(); ++l) {
      std::string name = "out_" + std::to_string(l);
      if (outputs.size() > 1) name += ".device" + std::to_string(d);
      const std::filesystem::path path = std::filesystem::path(dir) / (name + ".npy");
      std::ofstream file(path, std::ios::binary);
      const std::string bytes = hlo::WriteNpy(*leaves[l]);
      file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
      if (!file) return Status::InvalidArgument("--output-dir: cannot write " + path.string());
    }
  }
  return Status::Ok();
}

}  // namespace

Result<std::string> EstimateHloCommand(const HloOptions& o) {
  auto setup = Prepare(o);
  if (!setup.ok()) return setup.status();
  const hlo::Limits limits;
  auto text = ReadHlo(o.hlo, limits);
  if (!text.ok()) return text.status();
  hlo::CostOptions options;
  options.precision = setup->precision;
  options.timing_mode = setup->timing;
  options.allow_unsupported = o.allow_unsupported;
  // HLO text or StableHLO (docs/stablehlo.md): the dialect is told by the text's first word.
  auto module = engine::stablehlo::ParseAnyModule(*text, limits);
  if (!module.ok()) return Flag("--hlo", module.status());
  auto cost = hlo::PriceModule(*module, setup->slice, options);
  if (!cost.ok()) return Flag("--hlo", cost.status());
  Report r;
  r["mode"] = "estimate";
  r["precision"] = o.precision;
  AddCostReport(r, *cost, o.top, o.format == "json");
  return Render(r, o.format);
}

Result<std::string> RunHloCommand(const HloOptions& o) {
  auto setup = Prepare(o);
  if (!setup.ok()) return setup.status();
  hlo::RunOptions options;
  auto text = ReadHlo(o.hlo, options.limits);
  if (!text.ok()) return text.status();
  options.precision = setup->precision;
  options.allow_unsupported_pricing = o.allow_unsupported;
  options.inputs.seed = o.seed;
  options.inputs.npy_dir = o.params_dir;
  options.inputs.distinct_per_device = o.distinct_per_device;
  for (const std::string& spec : o.values) {
    auto value = ParseValue(spec);
    if (!value.ok()) return value.status();
    options.inputs.values[value->first] = std::move(value->second);
  }
  auto module = engine::stablehlo::ParseAnyModule(*text, options.limits);
  if (!module.ok()) return Flag("--hlo", module.status());
  auto run = hlo::RunModule(*module, setup->slice, options);
  if (!run.ok()) return Flag("--hlo", run.status());
  if (!o.output_dir.empty()) TPUEMU_RETURN_IF_ERROR(WriteOutputs(o.output_dir, run->outputs));
  Report r;
  r["mode"] = "run";
  r["precision"] = o.precision;
  r["seed"] = o.seed;
  r["host_seconds"] = static_cast<double>(run->host_ns) * 1e-9;
  AddCostReport(r, run->cost, o.top, o.format == "json");
  Report outputs = Report::array();
  for (size_t d = 0; d < run->outputs.size(); ++d) {
    const std::vector<hlo::ArraySummary> summaries = hlo::Summarize(run->outputs[d]);
    for (size_t l = 0; l < summaries.size(); ++l) {
      const hlo::ArraySummary& s = summaries[l];
      std::string first;
      for (double v : s.first) first += (first.empty() ? "" : " ") + FormatNumber(Report(v));
      outputs.push_back({{"device", d},
                         {"output", l},
                         {"shape", s.shape},
                         {"min", s.min},
                         {"max", s.max},
                         {"mean", s.mean},
                         {"nans", s.nans},
                         {"first", first}});
    }
  }
  r["outputs"] = std::move(outputs);
  return Render(r, o.format);
}

}  // namespace tpuemu::cli
