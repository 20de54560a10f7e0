// Registration of every REST resource on the router. Each routes_*.cpp file owns one resource
// family.
#pragma once

#include <atomic>
#include <functional>

#include "api/router.h"
#include "api/worker_threads.h"
#include "base/status.h"
#include "service/catalog/catalog.h"
#include "service/common/scheduler.h"
#include "service/jobs/job_manager.h"
#include "service/nodes/node_manager.h"
#include "service/observability/observability.h"
#include "service/operations/operation_manager.h"

namespace tpuemu::api {

// nodes.* (v2): list, get, create, delete, patch, start, stop, getGuestAttributes. Mutations wait
// for their group commit, so they run on `writers`, never on an IO thread; reads answer inline.
void RegisterNodeRoutes(Router& router, service::NodeManager& nodes, WorkerThreads& writers);
// operations.* under /v2 (and /v1, /v1alpha1, /v2alpha1, which the service config also binds).
void RegisterOperationRoutes(Router& router, service::OperationManager& operations,
                             WorkerThreads& writers);
// acceleratorTypes, runtimeVersions, locations (also /v1), generateServiceIdentity; queuedResources
// answer 501 UNIMPLEMENTED naming the method.
void RegisterCatalogRoutes(Router& router, const service::Catalog& catalog);

// jobs (emulator extension): POST/GET .../nodes/{node}/jobs, GET .../locations/{zone}/jobs,
// GET|DELETE .../jobs/{job}, POST :cancel, GET :wait?timeout=60s, GET /logs?offset=K, GET /metrics.
// `scheduler` times out :wait long-polls; it must be stopped before `jobs` is destroyed.
void RegisterJobRoutes(Router& router, service::JobManager& jobs, service::Scheduler& scheduler,
                       WorkerThreads& writers);
// /healthz, /readyz (200 only once `ready` is true) and POST /_emulator/reset (calls `reset`).
struct EmulatorHooks {
  const std::atomic<bool>* ready = nullptr;
  std::function<Status()> reset;
};
void RegisterEmulatorRoutes(Router& router, EmulatorHooks hooks);
// GET /_emulator/hardware[?acceleratorType=T]: every type's engine figures and the zones offering
// it (NOT_FOUND for an unknown type), plus the zone capacity in TensorCores tpuemud runs with.
void RegisterHardwareRoutes(Router& router, const service::Catalog& catalog,
                            int64_t zone_capacity_tensorcores);

// POST /_emulator/compare (body: engine/cost/compare_request.h) and GET /_emulator/compare?...
// (the model's fields in the query): the TPU comparison of docs/cost-model.md, as JSON.
void RegisterCompareRoutes(Router& router);

// Observability (emulator extensions): GET /metrics (Prometheus text 0.0.4), GET
// .../nodes/{node}/metricsReport and .../jobs/{job}/metricsReport (torch_xla's report, text/plain),
// GET .../nodes/{node}/metrics?window=3600s (utilization history), GET
// /v2/projects/{project}/events?since=&timeout=&pageSize= (long-poll up to 60s). `scheduler`
// times out event long-polls; it must be stopped before `obs` is destroyed.
void RegisterObservabilityRoutes(Router& router, service::Observability& obs,
                                 service::NodeManager& nodes, service::Scheduler& scheduler);

}  // namespace tpuemu::api
