#include "cli/tpuemu_engine/estimate.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string_view>
#include <vector>

#include "cli/tpuemu_engine/report_table.h"
#include "engine/chip/chip_model.h"
#include "engine/chip/timing.h"
#include "engine/frontend/compiler.h"
#include "engine/frontend/program_json.h"
#include "engine/hardware/hardware.h"
#include "engine/hardware/numerics.h"
#include "engine/runtime/tensor.h"

namespace tpuemu::cli {
namespace {

using engine::Dataflow;
using engine::GemmShape;
using engine::TimingMode;
using Report = nlohmann::ordered_json;

// "4,5,6" -> {4, 5, 6}; every piece must be a whole positive integer.
Result<std::vector<int64_t>> ParsePositiveList(std::string_view flag, std::string_view text,
                                               char sep, size_t min_count, size_t max_count,
                                               std::string_view expected) {
  std::vector<int64_t> values;
  auto bad = [&]() {
    return Status::InvalidArgument(std::string(flag) + ": expected " + std::string(expected) +
                                   " (positive integers), got '" + std::string(text) + "'");
  };
  size_t start = 0;
  while (true) {
    const size_t end = std::min(text.find(sep, start), text.size());
    const std::string_view piece = text.substr(start, end - start);
    int64_t v = 0;
    const auto [ptr, ec] = std::from_chars(piece.data(), piece.data() + piece.size(), v);
    if (piece.empty() || ec != std::errc() || ptr != piece.data() + piece.size() || v <= 0) {
      return bad();
    }
    values.push_back(v);
    if (end == text.size()) break;
    start = end + 1;
  }
  if (values.size() < min_count || values.size() > max_count) return bad();
  return values;
}

Status Prefixed(std::string_view flag, const Status& status) {
  return Status(status.code(), std::string(flag) + ": " + status.message());
}

// What a precision costs a GEMM: its MXU passes (engine::MxuPasses, the one table) and the bytes
// per operand element it moves (DEFAULT feeds bf16 operands; the others keep f32 in HBM).
struct PrecisionCost {
  int passes;
  int bytes_per_element;
};

Result<PrecisionCost> ParsePrecisionCost(std::string_view name) {
  Result<engine::Precision> precision = engine::ParsePrecision(name);
  if (!precision.ok()) return Prefixed("--precision", precision.status());
  return PrecisionCost{engine::MxuPasses(*precision),
                       *precision == engine::Precision::kDefault ? 2 : 4};
}

// The GEMM an estimate is for, after the --gemm / --conv parse (a conv as engine::ConvAsGemm; not
// service/workloads/workloads.h's Workload, which is a job's engine graph).
struct GemmWorkload {
  GemmShape shape;
  int64_t batch = 1;  // independent GEMMs (DotCost's batch)
  Report describe;    // echoed into the report
};

Result<GemmWorkload> ParseGemmWorkload(const EstimateOptions& o, TimingMode mode) {
  const int given = !o.gemm.empty() + !o.conv.empty() + !o.program.empty();
  if (given == 0) {
    return Status::InvalidArgument("one of --gemm, --conv or --program is required");
  }
  if (given > 1) {
    return Status::InvalidArgument("--gemm, --conv and --program are mutually exclusive");
  }
  if (o.batch <= 0) {
    return Status::InvalidArgument("--batch: must be a positive integer, got " +
                                   std::to_string(o.batch));
  }
  GemmWorkload w;
  if (!o.program.empty()) {
    w.describe = {{"op", "program"}, {"file", o.program}};
    return w;
  }
  if (!o.gemm.empty()) {
    Result<std::vector<int64_t>> v = ParsePositiveList("--gemm", o.gemm, ',', 3, 3, "M,N,K");
    if (!v.ok()) return v.status();
    w.shape = {(*v)[0], (*v)[1], (*v)[2]};
    w.batch = o.batch;
    w.describe = {{"op", "gemm"}, {"m", w.shape.m}, {"n", w.shape.n}, {"k", w.shape.k}};
    return w;
  }
  Result<std::vector<int64_t>> v =
      ParsePositiveList("--conv", o.conv, ',', 6, 7, "H,W,C,FH,FW,FILTERS[,STRIDE]");
  if (!v.ok()) return v.status();
  const std::vector<int64_t>& c = *v;
  engine::ConvShape conv{
      .batch = o.batch, .h = c[0], .w = c[1], .c = c[2], .fh = c[3], .fw = c[4], .filters = c[5]};
  conv.stride_h = conv.stride_w = c.size() == 7 ? c[6] : 1;
  engine::Padding padding;
  if (o.padding == "valid") {
    padding = engine::Padding::kValid;
  } else if (o.padding == "same") {
    padding = engine::Padding::kSame;
  } else {
    return Status::InvalidArgument("--padding: unknown padding '" + o.padding +
                                   "' (expected same or valid)");
  }
  conv = engine::WithPadding(conv, padding);
  const int64_t out_h = engine::ConvOutputHeight(conv);
  const int64_t out_w = engine::ConvOutputWidth(conv);
  if (out_h <= 0 || out_w <= 0) {
    return Status::InvalidArgument("--conv: the " + std::to_string(conv.fh) + "x" +
                                   std::to_string(conv.fw) + " filter does not fit the " +
                                   std::to_string(conv.h) + "x" + std::to_string(conv.w) +
                                   " input with " + o.padding + " padding");
  }
  // SCALE-Sim maps one image (batch fixed at 1) and we cost the images as separate GEMMs; the TPU
  // streams the whole batch through the same weights, so its M is batch·out_h·out_w.
  if (mode == TimingMode::kScaleSim) {
    conv.batch = 1;
    w.batch = o.batch;
  }
  w.shape = engine::ConvAsGemm(conv);
  w.describe = {{"op", "conv"},
                {"h", conv.h},
                {"w", conv.w},
                {"c", conv.c},
                {"fh", conv.fh},
                {"fw", conv.fw},
                {"filters", conv.filters},
                {"stride", conv.stride_h},
                {"padding", o.padding},
                {"out_h", out_h},
                {"out_w", out_w},
                {"m", w.shape.m},
                {"n", w.shape.n},
                {"k", w.shape.k}};
  return w;
}

Result<engine::ArrayShape> ParseArray(std::string_view text) {
  Result<std::vector<int64_t>> v = ParsePositiveList("--array", text, 'x', 2, 2, "ROWSxCOLS");
  if (!v.ok()) return v.status();
  constexpr int64_t kMaxDim = 1 << 16;
  if ((*v)[0] > kMaxDim || (*v)[1] > kMaxDim) {
    return Status::InvalidArgument("--array: each dimension must be at most " +
                                   std::to_string(kMaxDim) + ", got '" + std::string(text) + "'");
  }
  return engine::ArrayShape{static_cast<int>((*v)[0]), static_cast<int>((*v)[1]), 1};
}

// One GEMM (× batch, × passes) on a single bare array.
Report EstimateArray(const GemmWorkload& w, engine::ArrayShape array, double clock_hz,
                     TimingMode mode, Dataflow dataflow, int passes) {
  const engine::GemmTiming one = mode == TimingMode::kTpu
                                     ? engine::TpuMxuGemm(w.shape, array)
                                     : engine::ScaleSimGemm(w.shape, array, dataflow);
  // Repeated GEMMs (batch items, precision passes) are just more folds on the same array.
  const int64_t repeats = w.batch * passes;
  const int64_t folds = one.folds * repeats;
  const int64_t t =
      mode == TimingMode::kTpu
          ? (w.shape.m + array.macs_per_cell_per_cycle - 1) / array.macs_per_cell_per_cycle
          : (dataflow == Dataflow::kWeightStationary   ? w.shape.m
             : dataflow == Dataflow::kOutputStationary ? w.shape.k
                                                       : w.shape.n);
  const int64_t cycles = repeats == 1 ? one.cycles
                         : mode == TimingMode::kTpu
                             ? engine::TpuMxuCycles(folds, t, array)
                             : engine::ScaleSimCycles(folds, t, array, dataflow);
  const double flops = 2.0 * static_cast<double>(w.batch) * static_cast<double>(w.shape.m) *
                       static_cast<double>(w.shape.n) * static_cast<double>(w.shape.k);
  Report r;
  r["cycles"] = cycles;
  r["seconds"] = static_cast<double>(cycles) / clock_hz;
  r["flops"] = flops;
  r["mxu_utilization"] = flops / (2.0 * static_cast<double>(cycles) * array.rows * array.cols *
                                  array.macs_per_cell_per_cycle);
  r["folds"] = folds;
  r["mapping_efficiency"] = one.mapping_efficiency;
  r["compute_utilization"] = one.compute_utilization;
  return r;
}

constexpr int64_t kMaxProgramBytes = int64_t{256} << 20;

Result<std::string> ReadProgramFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound("--program: cannot open '" + path + "'");
  std::string text;
  char buf[1 << 16];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    text.append(buf, static_cast<size_t>(in.gcount()));
    if (static_cast<int64_t>(text.size()) > kMaxProgramBytes) {
      return Status::InvalidArgument("--program: '" + path + "' is larger than " +
                                     std::to_string(kMaxProgramBytes >> 20) + " MiB");
    }
  }
  return text;
}

// A whole JSON program, compiled for the slice: totals, peak HBM and one row per op.
Result<Report> EstimateProgram(const EstimateOptions& o, const engine::Slice& slice, int cores,
                               TimingMode mode, Dataflow dataflow) {
  if (o.batch != 1) {
    return Status::InvalidArgument("--batch: applies to --gemm and --conv, not to --program");
  }
  Result<engine::Precision> precision = engine::ParsePrecision(o.precision);
  if (!precision.ok()) return Prefixed("--precision", precision.status());
  Result<std::string> text = ReadProgramFile(o.program);
  if (!text.ok()) return text.status();
  Result<engine::Graph> graph = engine::ParseProgram(*text);
  if (!graph.ok()) return Prefixed("--program", graph.status());
  engine::CompileOptions options;
  options.precision = *precision;
  options.tensorcores = cores;
  options.timing_mode = mode;
  options.dataflow = dataflow;
  auto compiled = engine::Compile(*graph, slice, options);
  if (!compiled.ok()) return Prefixed("--program", compiled.status());
  const engine::CompiledProgram& p = **compiled;
  Report r;
  r["program"] = p.name;
  r["ops"] = p.plans.size();
  r["cycles"] = p.totals.cycles;
  r["seconds"] = p.totals.seconds;
  r["flops"] = p.totals.flops;
  r["mxu_utilization"] = p.totals.mxu_utilization;
  r["hbm_bytes"] = p.totals.hbm_bytes;
  r["peak_hbm_bytes_per_tensorcore"] = p.peak_hbm_bytes_per_tensorcore;
  r["hbm_capacity_bytes_per_tensorcore"] = p.hbm_capacity_bytes_per_tensorcore;
  Report ops = Report::array();
  for (const engine::OpPlan& plan : p.plans) {
    const engine::Op& op = graph->ops()[static_cast<size_t>(plan.op_index)];
    ops.push_back({{"id", plan.id},
                   {"op", std::string(engine::OpKindName(plan.kind))},
                   {"shape", engine::ShapeString(op.dtype, op.shape)},
                   {"unit", plan.on_mxu ? "mxu" : "vpu"},
                   {"cycles", plan.cost.cycles},
                   {"seconds", plan.cost.seconds},
                   {"flops", plan.cost.flops},
                   {"hbm_bytes", plan.cost.hbm_bytes},
                   {"mxu_utilization", plan.cost.mxu_utilization},
                   {"folds", plan.cost.folds},
                   {"bound", plan.cost.bound}});
  }
  r["per_op"] = std::move(ops);
  return r;
}

}  // namespace

Result<std::string> Estimate(const EstimateOptions& o) {
  Result<TimingMode> mode = engine::ParseTimingMode(o.timing);
  if (!mode.ok()) return Prefixed("--timing", mode.status());
  Dataflow dataflow = Dataflow::kWeightStationary;
  if (!o.dataflow.empty()) {
    Result<Dataflow> df = engine::ParseDataflow(o.dataflow);
    if (!df.ok()) return Prefixed("--dataflow", df.status());
    if (*mode != TimingMode::kScaleSim && *df != Dataflow::kWeightStationary) {
      return Status::InvalidArgument(
          "--dataflow: only --timing scalesim models os/is; the TPU MXU is weight-stationary");
    }
    dataflow = *df;
  }
  Result<PrecisionCost> precision = ParsePrecisionCost(o.precision);
  if (!precision.ok()) return precision.status();
  if (o.format != "table" && o.format != "json") {
    return Status::InvalidArgument("--format: unknown format '" + o.format +
                                   "' (expected table or json)");
  }
  if (!o.array.empty() && !o.accelerator_type.empty()) {
    return Status::InvalidArgument("--array and --accelerator-type are mutually exclusive");
  }
  if (o.cores < 0) {
    return Status::InvalidArgument("--cores: must be a positive integer, got " +
                                   std::to_string(o.cores));
  }
  Result<GemmWorkload> work = ParseGemmWorkload(o, *mode);
  if (!work.ok()) return work.status();

  Report report;
  report["timing"] = std::string(engine::TimingModeName(*mode));
  if (*mode == TimingMode::kScaleSim) report["dataflow"] = std::string(DataflowName(dataflow));
  report["precision"] = o.precision;
  report["passes"] = precision->passes;
  for (const auto& [key, value] : work->describe.items()) report[key] = value;
  if (o.program.empty()) report["batch"] = o.batch;

  if (!o.array.empty()) {
    if (!o.program.empty()) {
      return Status::InvalidArgument("--array: --program needs a TPU (--accelerator-type)");
    }
    Result<engine::ArrayShape> array = ParseArray(o.array);
    if (!array.ok()) return array.status();
    if (!(o.clock_hz > 0)) {
      return Status::InvalidArgument("--clock-hz: must be positive, got " +
                                     std::to_string(o.clock_hz));
    }
    if (o.cores > 1) return Status::InvalidArgument("--cores: a bare --array has one core");
    report["array"] = o.array;
    report["clock_hz"] = o.clock_hz;
    // Kept in a local: a range-for over a temporary's items() would dangle.
    const Report timing =
        EstimateArray(*work, *array, o.clock_hz, *mode, dataflow, precision->passes);
    for (const auto& [key, value] : timing.items()) report[key] = value;
  } else {
    const std::string type =
        o.accelerator_type.empty() ? kDefaultAcceleratorType : o.accelerator_type;
    Result<engine::Slice> slice = engine::Slice::FromAcceleratorType(type);
    if (!slice.ok()) return Prefixed("--accelerator-type", slice.status());
    const int cores = o.cores == 0 ? slice->tensorcores() : o.cores;
    if (cores > slice->tensorcores()) {
      return Status::InvalidArgument("--cores: " + type + " has " +
                                     std::to_string(slice->tensorcores()) +
                                     " TensorCores, asked for " + std::to_string(cores));
    }
    const engine::ChipSpec& spec = slice->spec();
    if (!o.program.empty()) {
      Result<Report> program = EstimateProgram(o, *slice, cores, *mode, dataflow);
      if (!program.ok()) return program.status();
      report["accelerator_type"] = type;
      report["generation"] = std::string(spec.name);
      report["tensorcores"] = cores;
      report["clock_hz"] = spec.clock_hz;
      for (const auto& [key, value] : program->items()) report[key] = value;
      if (o.format == "json") return report.dump(2) + "\n";
      return RenderTable(report);
    }
    // The one chip model (engine/chip/chip_model.h): the fold model at the calibrated
    // efficiencies, as a job's HLO cost model prices the same dot.
    const engine::OpCost cost =
        engine::OnChip(spec,
                       engine::DotCost(spec, work->batch, work->shape, precision->passes,
                                       precision->bytes_per_element, cores, *mode, dataflow),
                       cores, *mode);
    report["accelerator_type"] = type;
    report["generation"] = std::string(spec.name);
    report["tensorcores"] = cores;
    report["tensorcores_used"] = cost.tensorcores_used;
    report["clock_hz"] = spec.clock_hz;
    report["cycles"] = cost.cycles;
    report["compute_cycles"] = cost.compute_cycles;
    report["memory_cycles"] = cost.memory_cycles;
    report["collective_cycles"] = cost.collective_cycles;
    report["seconds"] = cost.seconds;
    report["flops"] = cost.flops;
    report["mxu_utilization"] = cost.mxu_utilization;
    report["hbm_bytes"] = cost.hbm_bytes;
    report["folds"] = cost.folds;
    report["bound"] = cost.bound;
  }
  if (o.format == "json") return report.dump(2) + "\n";
  return RenderTable(report);
}

}  // namespace tpuemu::cli
