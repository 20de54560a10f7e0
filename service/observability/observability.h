// Observability: the bundle behind the observability routes — events, utilization history, HTTP
// metrics, the Prometheus exporter and the torch_xla-style metrics reports — built once and hooked
// to the node and job managers' observers by its constructor. The events are written by the
// managers themselves, in the transaction of each change: the constructor makes events() the job
// manager's EventSink, and the composition root (daemon/app.cpp, which the in-process test server
// uses too) makes it the write path's, for nodes, queued resources and faults.
//
// Lifetime: construct after the managers, Start() once serving, Stop() after the HTTP server, the
// scheduler and JobManager::Shutdown() (nothing may notify after that), then destroy it before the
// managers. Reset() after the store was wiped (POST /_emulator/reset). Thread-safe as its parts.
#pragma once

#include <cstdint>
#include <functional>

#include "db/store.h"
#include "engine/frontend/compile_cache.h"
#include "engine/runtime/pool.h"
#include "service/jobs/job_manager.h"
#include "service/nodes/node_manager.h"
#include "service/observability/event_log.h"
#include "service/observability/http_metrics.h"
#include "service/observability/metrics_report_builder.h"
#include "service/observability/prometheus_exporter.h"
#include "service/observability/utilization_sampler.h"

namespace tpuemu::service {

struct ObservabilityOptions {
  int64_t utilization_interval_ms = 10000;  // 0 = no background sampling (tests sample by hand)
  int64_t utilization_retention_seconds = 86400;
  std::function<int64_t()> now_ms;  // the sampler's clock; default the wall clock
};

class Observability {
 public:
  Observability(db::Store& store, NodeManager& nodes, JobManager& jobs, engine::Pool& pool,
                engine::CompileCache& cache, ObservabilityOptions options = {});
  Observability(const Observability&) = delete;
  Observability& operator=(const Observability&) = delete;

  void Start();
  void Stop();
  void Reset();

  EventLog& events() { return events_; }
  UtilizationSampler& utilization() { return utilization_; }
  HttpMetrics& http() { return http_; }
  PrometheusExporter& prometheus() { return prometheus_; }
  MetricsReportBuilder& reports() { return reports_; }

 private:
  HttpMetrics http_;
  EventLog events_;
  UtilizationSampler utilization_;
  PrometheusExporter prometheus_;
  MetricsReportBuilder reports_;
};

}  // namespace tpuemu::service
