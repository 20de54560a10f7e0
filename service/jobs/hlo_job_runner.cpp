#include "service/jobs/hlo_job_runner.h"

#include <algorithm>
#include <chrono>

#include "engine/hlo/program.h"
#include "service/jobs/job_log_lines.h"
#include "service/jobs/job_result.h"

namespace tpuemu::service {
namespace {

using nlohmann::json;
namespace hlo = engine::hlo;
using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Like SummarizeTensor (job_result.h): dtype, shape, checksum (the sum), sample (the first four).
json SummarizeArray(const hlo::Array& a) {
  double sum = 0;
  json sample = json::array();
  for (int64_t k = 0; k < a.size(); ++k) {
    const double v = a.GetDouble(k);
    sum += v;
    if (k < 4) sample.push_back(v);
  }
  return {{"dtype", hlo::PrimitiveTypeName(a.type)},
          {"shape", a.dims},
          {"checksum", sum},
          {"sample", sample}};
}

json SummarizeOutputs(const hlo::Value& value) {
  std::vector<const hlo::Array*> leaves;
  value.CollectArrays(leaves);
  json out = json::object();
  for (size_t i = 0; i < leaves.size(); ++i) {
    out["out_" + std::to_string(i)] = SummarizeArray(*leaves[i]);
  }
  return out;
}

// What the job's program row, profile and line say about the priced module.
CompiledJob Priced(const std::string& name, const HloJobSpec& spec, const hlo::ModuleCost& cost,
                   const engine::Slice& slice, double seconds) {
  const hlo::Module& module = *spec.module;
  const hlo::Computation& entry = module.entry_computation();
  int64_t in_bytes = 0;
  for (int p : entry.parameters)
    in_bytes += entry.instructions[static_cast<size_t>(p)].shape.ByteSize();
  const int64_t out_bytes = entry.instructions[static_cast<size_t>(entry.root)].shape.ByteSize();
  CompiledJob out;
  out.tensorcores = static_cast<int>(module.devices() * cost.tensorcores_per_device);
  out.profile = {{"ops", HloOpsProfile(cost, slice.spec())},
                 {"hbmPeakBytesPerTensorCore", cost.peak_hbm_bytes_per_tensorcore}};
  out.log_line =
      HloLine({.module = module.name,
               .instructions = module.instruction_count,
               .devices = module.devices(),
               .tensorcores_per_device = cost.tensorcores_per_device,
               .accelerator_type = slice.type().name,
               .cycles = cost.cycles,
               .seconds = cost.seconds,
               .hbm_peak_bytes_per_tensorcore = cost.peak_hbm_bytes_per_tensorcore,
               .hbm_capacity_bytes_per_tensorcore = cost.hbm_capacity_bytes_per_tensorcore,
               .fits = cost.fits});
  out.record = db::JobProgramRow{
      .job = name,
      .compile_cache_hit = false,
      .compile_seconds = seconds,
      .compile_end_unix_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count(),
      .tensorcores = out.tensorcores,
      .hbm_peak_bytes_per_tensorcore = cost.peak_hbm_bytes_per_tensorcore,
      .transfer_to_device_bytes_per_step = in_bytes * module.devices(),
      .transfer_from_device_bytes_per_step = out_bytes * module.devices()};
  return out;
}

// The metrics every hlo job's result has (the "metrics" of other jobs, plus the devices).
json Metrics(const CompiledJob& priced, const hlo::ModuleCost& cost, const engine::Slice& slice,
             int64_t steps, const RunTotals& totals) {
  int64_t collective_cycles = 0;
  for (const hlo::InstructionCost& row : cost.rows) {
    collective_cycles += row.collective_cycles * row.count;
  }
  return {{"steps", steps},
          {"compileCacheHit", false},
          {"compileSeconds", priced.record.compile_seconds},
          {"cyclesPerStep", steps > 0 ? totals.cycles / steps : cost.cycles},
          {"emulatedSecondsTotal", totals.emulated_seconds},
          {"flopsTotal", totals.flops},
          {"emulatedTflops",
           totals.emulated_seconds > 0 ? totals.flops / totals.emulated_seconds / 1e12 : 0},
          {"mxuUtilization", cost.mxu_utilization},
          {"hbmPeakBytesPerTensorCore", cost.peak_hbm_bytes_per_tensorcore},
          {"hbmCapacityBytesPerTensorCore", cost.hbm_capacity_bytes_per_tensorcore},
          {"allReduceCyclesPerStep", collective_cycles},
          {"hostSecondsTotal", totals.host_seconds},
          {"acceleratorType", slice.type().name},
          {"devices", cost.devices},
          {"tensorcores", priced.tensorcores}};
}

json Estimate(const hlo::ModuleCost& cost) {
  return {{"module", cost.module},
          {"devices", cost.devices},
          {"tensorcoresPerDevice", cost.tensorcores_per_device},
          {"cyclesPerStep", cost.cycles},
          {"stepSeconds", cost.seconds},
          {"flopsPerStep", cost.flops * cost.devices},
          {"mxuFlopsPerStep", cost.mxu_flops * cost.devices},
          {"hbmBytesPerStepPerDevice", cost.hbm_bytes},
          {"mxuUtilization", cost.mxu_utilization},
          {"hbmPeakBytesPerTensorCore", cost.peak_hbm_bytes_per_tensorcore},
          {"hbmCapacityBytesPerTensorCore", cost.hbm_capacity_bytes_per_tensorcore},
          {"fits", cost.fits},
          {"warnings", cost.warnings}};
}

std::string FitLine(const hlo::ModuleCost& cost) {
  return std::to_string(cost.peak_hbm_bytes_per_tensorcore) + " of " +
         std::to_string(static_cast<int64_t>(cost.hbm_capacity_bytes_per_tensorcore)) +
         " bytes of HBM per TensorCore at its peak";
}

}  // namespace

json HloOpsProfile(const hlo::ModuleCost& cost, const engine::ChipSpec& spec) {
  const double peak_per_cycle =
      spec.PeakBf16FlopsPerTensorCore() / spec.clock_hz * cost.tensorcores_per_device;
  json ops = json::array();
  for (const hlo::InstructionCost& row : cost.rows) {
    const int64_t cycles = row.cycles * row.count;
    const double count = static_cast<double>(row.count);
    ops.push_back(
        {{"id", "%" + row.name},
         {"op", row.opcode},
         {"opName", row.op_name},
         {"unit", row.unit},
         {"count", row.count},
         {"cycles", cycles},
         {"emulatedSeconds", static_cast<double>(cycles) / cost.clock_hz},
         {"flops", row.flops * count},
         {"mxuUtilization",
          row.cycles > 0
              ? std::min(1.0, row.mxu_flops / (static_cast<double>(row.cycles) * peak_per_cycle))
              : 0.0},
         {"hbmBytes", row.hbm_bytes * count},
         {"passes", row.passes},
         {"bound", row.bound}});
  }
  return ops;
}

Result<HloJobEnd> RunHloJob(JobRecords& records, const std::string& name, const JobSpec& spec,
                            const engine::Slice& slice, const engine::ParallelContext& parallel) {
  const std::atomic<bool>* cancel = parallel.cancel.flag;
  const HloJobSpec& job = *spec.hlo;
  // The price Submit made (PriceHloJobOnNode) serves the run; a job recovered after a restart
  // is priced here, the same way.
  std::shared_ptr<const HloPrice> price = spec.hlo_price;
  if (price == nullptr) {
    Result<std::shared_ptr<const HloPrice>> repriced =
        PriceHloJobOnNode(job, slice.type(), spec.precision);
    if (!repriced.ok()) return repriced.status();
    price = std::move(*repriced);
  }
  const hlo::ModuleCost* estimate = &price->cost;
  const CompiledJob priced = Priced(name, job, *estimate, slice, price->seconds);
  // From now on .../metrics shows the profile (a failed write loses only that early view).
  (void)records.RecordCompile(name, priced);
  if (job.estimate_only) {
    HloJobEnd end;
    end.result = {{"profile", priced.profile},
                  {"estimate", Estimate(*estimate)},
                  {"metrics", Metrics(priced, *estimate, slice, 0, {})}};
    end.result["metrics"]["estimateOnly"] = true;
    end.reason = "estimated without running: " + FitLine(*estimate) +
                 (estimate->fits ? " (fits)" : " (does not fit)");
    return end;
  }
  if (!estimate->fits) {
    return Status::ResourceExhausted("the module needs " + FitLine(*estimate) + " on " +
                                     slice.type().name +
                                     "; set hlo.estimateOnly to price it without running");
  }
  hlo::RunOptions run;
  run.precision = spec.precision;
  run.inputs.seed = spec.seed;
  run.inputs.distinct_per_device = job.distinct_per_device;
  run.inputs.values = job.params;
  run.limits = job.limits;
  run.allow_unsupported_pricing = true;
  run.cancel = cancel;
  run.pool = parallel.pool;
  run.pool_group = parallel.group;
  run.max_threads = parallel.max_threads;
  // Priced once: a module whose counts the text fixes is not priced again (counts_exact); one
  // with a conditional or a loop of unknown trips is priced with its first step's counts, and
  // again only when a step's counts differ from the step before (every step runs the same
  // inputs, so they do not).
  run.priced = estimate;
  RunTotals totals;
  hlo::RunResult last;
  for (int64_t step = 0; step < spec.steps; ++step) {
    if (cancel != nullptr && cancel->load()) return Status::Cancelled("cancelled between steps");
    const auto t0 = Clock::now();
    run.last_run = step > 0 ? &last : nullptr;
    Result<hlo::RunResult> r = hlo::RunModule(*job.module, slice, run);
    if (!r.ok()) return r.status();
    db::JobStepRow row;
    row.step = step;
    row.cycles = r->cost.cycles;
    row.emulated_seconds = r->cost.seconds;
    row.flops = r->cost.flops * static_cast<double>(r->cost.devices);
    row.mxu_utilization = r->cost.mxu_utilization;
    row.host_seconds = SecondsSince(t0);
    totals.Add(row);
    TPUEMU_RETURN_IF_ERROR(records.RecordStep(name, row));
    last = std::move(r).value();
  }
  HloJobEnd end;
  const hlo::ModuleCost& cost = spec.steps > 0 ? last.cost : *estimate;
  // The profile with the run's counts (a while loop's real trips).
  end.result = {
      {"profile",
       {{"ops", HloOpsProfile(cost, slice.spec())},
        {"hbmPeakBytesPerTensorCore", cost.peak_hbm_bytes_per_tensorcore}}},
      {"outputs", last.outputs.empty() ? json::object() : SummarizeOutputs(last.outputs[0])},
      {"metrics", Metrics(priced, cost, slice, spec.steps, totals)}};
  if (!cost.warnings.empty()) end.result["warnings"] = cost.warnings;
  end.reason = "completed " + std::to_string(spec.steps) + " steps";
  return end;
}

}  // namespace tpuemu::service
