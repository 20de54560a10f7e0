#include "service/observability/prometheus_exporter.h"

#include <string_view>

#include "service/observability/metrics_report_builder.h"

namespace tpuemu::service {
PrometheusExporter::PrometheusExporter(db::Store& store, const engine::Pool& pool,
                                       const engine::CompileCache& cache, const HttpMetrics& http,
                                       const UtilizationSampler& utilization)
    : pool_(pool),
      cache_(cache),
      http_(http),
      utilization_(utilization),
      stats_(store),
      job_duration_({0.001, 0.01, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600, 14400, 86400}) {}

void PrometheusExporter::OnJobStateChanged(const Job& job, std::optional<JobState>) {
  std::optional<int64_t> start, end;
  if (IsTerminal(job.state) && job.start_time && job.end_time) {
    start = ParseRfc3339Ns(*job.start_time);
    end = ParseRfc3339Ns(*job.end_time);
  }
  std::lock_guard lock(mu_);
  ++transitions_[std::string(JobStateName(job.state))];
  if (start && end && *end >= *start) {
    job_duration_.Observe(static_cast<double>(*end - *start) / 1e9);
  }
}

Result<std::string> PrometheusExporter::Render(const RenderScope& scope) const {
  PrometheusText out;
  if (scope.aggregates) TPUEMU_RETURN_IF_ERROR(RenderAggregates(out));
  if (scope.per_node) RenderPerNode(out, scope.project);
  return out.str();
}

Status PrometheusExporter::RenderAggregates(PrometheusText& out) const {
  Result<std::map<std::pair<std::string, std::string>, int64_t>> nodes =
      stats_.CountNodesByStateAndType();
  if (!nodes.ok()) return nodes.status();
  Result<std::map<std::string, int64_t>> jobs = stats_.CountJobsByState();
  if (!jobs.ok()) return jobs.status();

  out.Family("tpuemu_info", "tpuemud build information (always 1).", "gauge");
  out.Sample("tpuemu_info", {{"version", "0.1.0"}}, 1);
  http_.Write(out);

  out.Family("tpuemu_nodes", "TPU VM nodes by state and accelerator type.", "gauge");
  for (const auto& [key, count] : *nodes) {
    out.Sample("tpuemu_nodes", {{"state", key.first}, {"accelerator_type", key.second}},
               static_cast<double>(count));
  }
  out.Family("tpuemu_jobs", "Jobs by state (jobs of deleted nodes included).", "gauge");
  for (const auto& [state, count] : *jobs) {
    out.Sample("tpuemu_jobs", {{"state", state}}, static_cast<double>(count));
  }
  {
    std::lock_guard lock(mu_);
    out.Family("tpuemu_job_transitions_total",
               "Job state changes since tpuemud started, by the state entered.", "counter");
    for (const auto& [state, count] : transitions_) {
      out.Sample("tpuemu_job_transitions_total", {{"state", state}}, static_cast<double>(count));
    }
    out.Family("tpuemu_job_duration_seconds",
               "Wall time from RUNNING to a terminal state, of jobs that ended since start.",
               "histogram");
    out.HistogramSeries("tpuemu_job_duration_seconds", {}, job_duration_);
  }

  const engine::Pool::Stats pool = pool_.GetStats();
  out.Family("tpuemu_engine_pool_threads", "Worker threads of the engine pool.", "gauge");
  out.Sample("tpuemu_engine_pool_threads", {}, pool.threads);
  out.Family("tpuemu_engine_pool_busy_workers", "Engine pool workers running a task now.", "gauge");
  out.Sample("tpuemu_engine_pool_busy_workers", {}, pool.busy_workers);
  out.Family("tpuemu_engine_pool_queue_depth", "Engine pool tasks submitted and not started.",
             "gauge");
  out.Sample("tpuemu_engine_pool_queue_depth", {}, static_cast<double>(pool.queued_tasks));
  out.Family("tpuemu_engine_pool_completed_tasks_total", "Engine pool tasks completed.", "counter");
  out.Sample("tpuemu_engine_pool_completed_tasks_total", {},
             static_cast<double>(pool.completed_tasks));

  const engine::CompileCache::Stats cache = cache_.GetStats();
  out.Family("tpuemu_compile_cache_hits_total", "Compile cache hits (torch_xla's CachedCompile).",
             "counter");
  out.Sample("tpuemu_compile_cache_hits_total", {}, static_cast<double>(cache.hits));
  out.Family("tpuemu_compile_cache_misses_total",
             "Compile cache misses, i.e. compiles (torch_xla's UncachedCompile).", "counter");
  out.Sample("tpuemu_compile_cache_misses_total", {}, static_cast<double>(cache.misses));
  out.Family("tpuemu_compile_cache_evictions_total", "Programs evicted from the compile cache.",
             "counter");
  out.Sample("tpuemu_compile_cache_evictions_total", {}, static_cast<double>(cache.evictions));
  out.Family("tpuemu_compile_cache_entries", "Programs held by the compile cache.", "gauge");
  out.Sample("tpuemu_compile_cache_entries", {}, static_cast<double>(cache.entries));
  out.Family("tpuemu_compile_seconds_total", "Host time spent compiling programs.", "counter");
  out.Sample("tpuemu_compile_seconds_total", {}, cache.compile_seconds_total);
  return Status::Ok();
}

void PrometheusExporter::RenderPerNode(PrometheusText& out, const std::string& project) const {
  std::vector<NodeUtilization> latest = utilization_.Latest();
  if (!project.empty()) {
    const std::string prefix = "projects/" + project + "/";
    std::erase_if(latest, [&](const NodeUtilization& u) {
      return !std::string_view(u.sample.node).starts_with(prefix);
    });
  }
  struct Gauge {
    const char* name;
    const char* help;
    double (*value)(const db::UtilizationRow&);
  };
  const Gauge gauges[] = {
      {"tpuemu_accelerator_duty_cycle_ratio",
       "Fraction of the last sampling interval the node ran a job (accelerator/duty_cycle).",
       [](const db::UtilizationRow& r) { return r.duty_cycle; }},
      {"tpuemu_accelerator_tensorcore_utilization_ratio",
       "Time-weighted fraction of the node's TensorCores in use "
       "(accelerator/tensorcore_utilization).",
       [](const db::UtilizationRow& r) { return r.tensorcore_utilization; }},
      {"tpuemu_accelerator_mxu_utilization_ratio",
       "Time-weighted MXU utilization of the node's jobs (tpu/mxu/utilization).",
       [](const db::UtilizationRow& r) { return r.mxu_utilization; }},
      {"tpuemu_accelerator_memory_used_bytes",
       "HBM used by the running program (accelerator/memory_used).",
       [](const db::UtilizationRow& r) { return static_cast<double>(r.hbm_used_bytes); }},
      {"tpuemu_accelerator_memory_total_bytes", "HBM of the slice (accelerator/memory_total).",
       [](const db::UtilizationRow& r) { return static_cast<double>(r.hbm_total_bytes); }},
  };
  for (const Gauge& g : gauges) {
    out.Family(g.name, g.help, "gauge");
    for (const NodeUtilization& u : latest) {
      out.Sample(g.name, {{"node", u.sample.node}, {"accelerator_type", u.accelerator_type}},
                 g.value(u.sample));
    }
  }
}

}  // namespace tpuemu::service
