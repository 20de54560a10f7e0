#include "service/observability/observability.h"

namespace tpuemu::service {

Observability::Observability(db::Store& store, NodeManager& nodes, JobManager& jobs,
                             engine::Pool& pool, engine::CompileCache& cache,
                             ObservabilityOptions options)
    : events_(store),
      utilization_(store, {.interval_ms = options.utilization_interval_ms,
                           .retention_seconds = options.utilization_retention_seconds,
                           .now_ms = options.now_ms}),
      prometheus_(store, pool, cache, http_, utilization_),
      reports_(store, nodes) {
  jobs.SetEventSink(&events_);
  jobs.AddTransitionObserver([this](const Job& job, std::optional<JobState> previous) {
    utilization_.OnJobStateChanged(job, previous);
    prometheus_.OnJobStateChanged(job, previous);
  });
}

void Observability::Start() { utilization_.Start(); }

void Observability::Stop() {
  utilization_.Stop();
  events_.Stop();
}

void Observability::Reset() { utilization_.Reset(); }

}  // namespace tpuemu::service
