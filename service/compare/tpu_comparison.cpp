#include "service/compare/tpu_comparison.h"

#include "engine/cost/compare_report.h"
#include "engine/cost/compare_request.h"
#include "engine/cost/program_profile.h"
#include "service/jobs/job_spec.h"
#include "service/workloads/workloads.h"

namespace tpuemu::service {

Result<engine::cost::StepProfile> PriceWorkload(const nlohmann::json& workload) {
  Result<JobSpec> spec = ParseJobSpec({{"workload", workload}});
  if (!spec.ok()) return spec.status();
  if (spec->kind == WorkloadKind::kProgram) {
    return Status::InvalidArgument("workload: give a program as \"program\", not a workload");
  }
  Result<Workload> built = Workload::Build(*spec);
  if (!built.ok()) return built.status();
  // The batch is what the job's spec says; a matmul's rows are its "batch".
  const int64_t batch = spec->kind == WorkloadKind::kMatmul ? spec->m : spec->batch;
  Result<engine::cost::ProgramFigures> figures =
      engine::cost::FiguresFromGraph(built->graph(), batch);
  if (!figures.ok()) return figures.status();
  figures->source = "workload";
  figures->name = std::string(WorkloadKindName(spec->kind));
  figures->gradient_bytes = built->GradientBytes();
  if (spec->kind == WorkloadKind::kTransformer) {
    figures->unit = "tokens";
    figures->units_per_step = static_cast<double>(spec->batch * spec->seq_len);
  }
  return engine::cost::ProfileFromFigures(*figures);
}

Result<nlohmann::ordered_json> CompareTpus(const nlohmann::json& request) {
  Result<engine::cost::CompareRequest> r =
      engine::cost::ParseCompareRequest(request, PriceWorkload);
  if (!r.ok()) return r.status();
  Result<engine::cost::Comparison> c = engine::cost::Compare(r->source, r->options);
  if (!c.ok()) return c.status();
  return engine::cost::ComparisonToJson(*c, r->options.prices, r->options.efficiency);
}

}  // namespace tpuemu::service
