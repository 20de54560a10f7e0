#include "service/jobs/job_result.h"

namespace tpuemu::service {

using nlohmann::json;

void RunTotals::Add(const db::JobStepRow& step) {
  cycles += step.cycles;
  emulated_seconds += step.emulated_seconds;
  flops += step.flops;
  host_seconds += step.host_seconds;
  if (step.loss) final_loss = step.loss;
}

json SummarizeTensor(const engine::Tensor& t) {
  json out;
  out["dtype"] = engine::DTypeName(t.dtype());
  out["shape"] = t.shape().dims;
  double sum = 0;
  json sample = json::array();
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    double v = t.dtype() == engine::DType::kI32 ? t.i32()[i] : t.f32()[i];
    sum += v;
    if (i < 4) sample.push_back(v);
  }
  out["checksum"] = sum;
  out["sample"] = sample;
  return out;
}

json AssembleResult(const CompiledJob& compiled, const RunFacts& facts, const RunTotals& totals,
                    const std::map<std::string, engine::Tensor>& outputs) {
  const engine::CompiledProgram& program = compiled.program();
  json result;
  result["profile"] = compiled.profile;
  json& summaries = result["outputs"] = json::object();
  for (const auto& [id, t] : outputs) summaries[id] = SummarizeTensor(t);
  if (totals.final_loss) result["finalLoss"] = *totals.final_loss;
  json& metrics = result["metrics"];
  metrics["steps"] = facts.steps;
  metrics["compileCacheHit"] = compiled.lookup.hit;
  metrics["compileSeconds"] = compiled.lookup.compile_seconds;
  metrics["cyclesPerStep"] = facts.steps > 0 ? totals.cycles / facts.steps : 0;
  metrics["emulatedSecondsTotal"] = totals.emulated_seconds;
  metrics["flopsTotal"] = totals.flops;
  metrics["emulatedTflops"] =
      totals.emulated_seconds > 0 ? totals.flops / totals.emulated_seconds / 1e12 : 0;
  metrics["mxuUtilization"] = program.totals.mxu_utilization;
  metrics["hbmPeakBytesPerTensorCore"] = program.peak_hbm_bytes_per_tensorcore;
  metrics["hbmCapacityBytesPerTensorCore"] = program.hbm_capacity_bytes_per_tensorcore;
  metrics["allReduceCyclesPerStep"] = facts.allreduce_cycles_per_step;
  metrics["hostSecondsTotal"] = totals.host_seconds;
  metrics["acceleratorType"] = facts.accelerator_type;
  return result;
}

}  // namespace tpuemu::service
