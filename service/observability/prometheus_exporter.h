// PrometheusExporter: the body of GET /metrics (text format 0.0.4), gathered at scrape time from
// the live objects and the store. Families (base units, `_total` on counters; anchors.md §4):
//   tpuemu_info{version}                                   gauge 1
//   tpuemu_http_requests_total / _request_duration_seconds (service/observability/http_metrics.h)
//   tpuemu_nodes{state,accelerator_type}                   gauge, from the store
//   tpuemu_jobs{state}                                     gauge, from the store
//   tpuemu_job_transitions_total{state}                    counter, this process
//   tpuemu_job_duration_seconds                            histogram of start -> end of jobs that
//                                                          ended in this process
//   tpuemu_engine_pool_threads / _busy_workers / _queue_depth gauges, _completed_tasks_total
//   tpuemu_compile_cache_hits_total / _misses_total / _evictions_total, _entries,
//   tpuemu_compile_seconds_total
//   per node {node,accelerator_type}, the Cloud Monitoring accelerator/* metrics from the latest
//   utilization sample: tpuemu_accelerator_duty_cycle_ratio, _tensorcore_utilization_ratio,
//   _mxu_utilization_ratio, _memory_used_bytes, _memory_total_bytes.
// Scopes (RenderScope): everything (GET /metrics with auth off or an admin token), the aggregate,
// project-free families only (GET /metrics for any other caller when auth is on: no node name),
// or one project's per-node families only (GET /v2/projects/P/metrics, behind the API's auth).
// Thread-safe: job counters guarded by mu_; everything else is read through thread-safe getters.
// All borrowed objects must outlive the exporter.
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "base/status.h"
#include "db/stats_repository.h"
#include "db/store.h"
#include "engine/frontend/compile_cache.h"
#include "engine/runtime/pool.h"
#include "service/jobs/job.h"
#include "service/observability/http_metrics.h"
#include "service/observability/prometheus_text.h"
#include "service/observability/utilization_sampler.h"

namespace tpuemu::service {

// What a scrape may see.
struct RenderScope {
  bool aggregates = true;  // the project-free families (info, http, counts, pool, cache)
  bool per_node = true;    // the per-node accelerator gauges
  std::string project;     // with per_node: only this project's nodes ("" = every project)
};

class PrometheusExporter {
 public:
  PrometheusExporter(db::Store& store, const engine::Pool& pool, const engine::CompileCache& cache,
                     const HttpMetrics& http, const UtilizationSampler& utilization);

  void OnJobStateChanged(const Job& job, std::optional<JobState> previous);
  // The exposition text; UNAVAILABLE/INTERNAL if the store cannot be read.
  Result<std::string> Render(const RenderScope& scope = {}) const;

 private:
  Status RenderAggregates(PrometheusText& out) const;
  void RenderPerNode(PrometheusText& out, const std::string& project) const;

  const engine::Pool& pool_;
  const engine::CompileCache& cache_;
  const HttpMetrics& http_;
  const UtilizationSampler& utilization_;
  db::StatsRepository stats_;

  mutable std::mutex mu_;
  std::map<std::string, uint64_t> transitions_;  // state name -> count; guarded by mu_
  Histogram job_duration_;                       // guarded by mu_
};

}  // namespace tpuemu::service
