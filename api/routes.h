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
#include "service/faults/chaos_rules.h"
#include "service/faults/maintenance.h"
#include "service/faults/preemption.h"
#include "service/faults/zone_capacity.h"
#include "service/jobs/job_manager.h"
#include "service/nodes/node_manager.h"
#include "service/observability/observability.h"
#include "service/operations/operation_manager.h"
#include "service/projects/project_metadata.h"
#include "service/queued_resources/queued_resource_manager.h"
#include "service/queued_resources/reservations.h"
#include "service/replicas/replica_set.h"
#include "service/workers/worker_manager.h"

namespace tpuemu::api {

class TerminalBudget;  // api/terminal_session.h

// Wraps a client write's handler (nodes, queued resources): while the store is behind
// (NodeManager::WriteBacklog), it answers 429 RESOURCE_EXHAUSTED with google.rpc.RetryInfo
// instead of adding to the backlog the node transitions wait behind.
Handler AdmittedWrite(const service::NodeManager& nodes, Handler handler);

// nodes.* under /v2 and /v2alpha1: list, get, create, delete, patch, start, stop,
// getGuestAttributes; v2alpha1 also simulateMaintenanceEvent and performMaintenance. Mutations
// wait for their group commit, so they run on `writers`, never on an IO thread; reads answer
// inline.
// `workers` (may be null) gives sandboxed workers' real SSH host keys to getGuestAttributes.
void RegisterNodeRoutes(Router& router, service::NodeManager& nodes,
                        service::MaintenanceManager& maintenance, WorkerThreads& writers,
                        const service::WorkerManager* workers = nullptr);
// queuedResources.* under /v2 and /v2alpha1: list, get, create, delete (force, requestId),
// reset; v2alpha1 also performMaintenanceQueuedResource and reservations.list.
void RegisterQueuedResourceRoutes(Router& router, service::QueuedResourceManager& manager,
                                  service::MaintenanceManager& maintenance,
                                  service::ReservationBook& reservations, WorkerThreads& writers);
// operations.* under /v2 (and /v1, /v1alpha1, /v2alpha1, which the service config also binds).
void RegisterOperationRoutes(Router& router, service::OperationManager& operations,
                             WorkerThreads& writers);
// acceleratorTypes, runtimeVersions, generateServiceIdentity under /v2 and /v2alpha1; locations
// under every version; the legacy /v1 acceleratorTypes and tensorflowVersions (gcloud compute
// tpus accelerator-types|versions list).
void RegisterCatalogRoutes(Router& router, const service::Catalog& catalog);
// GET /$discovery/rest?version=v2|v2alpha1 (and /discovery/v1/apis/tpu/{version}/rest): the
// discovery document of the emulated surface, its rootUrl pointing at the address the client
// used (the Host header).
void RegisterDiscoveryRoutes(Router& router);

// The fault endpoints under /_emulator (api/routes_faults.cpp). Every pointer must outlive the
// router.
struct FaultRouteDeps {
  service::Preempter* preempter = nullptr;
  service::MaintenanceManager* maintenance = nullptr;
  service::ChaosRules* chaos = nullptr;
  service::ZoneCapacity* capacity = nullptr;
  service::ReservationBook* reservations = nullptr;
  service::QueuedResourceManager* queued_resources = nullptr;
  WorkerThreads* writers = nullptr;
};
void RegisterFaultRoutes(Router& router, const FaultRouteDeps& deps);

// jobs (emulator extension): POST/GET .../nodes/{node}/jobs, GET .../locations/{zone}/jobs,
// GET|DELETE .../jobs/{job}, POST :cancel, GET :wait?timeout=60s, GET /logs?offset=K, GET /metrics.
// `scheduler` times out :wait long-polls; it must be stopped before `jobs` is destroyed.
void RegisterJobRoutes(Router& router, service::JobManager& jobs, service::Scheduler& scheduler,
                       WorkerThreads& writers);
// /healthz, /readyz (200 only once `ready` is true), POST /_emulator/reset (calls `reset`) and
// GET /_emulator/replicas: {"self": id, "replicas": [{"id", "address", "startTime",
// "heartbeatAgeMs"}]}, the live replicas serving this store (service/replicas/replica_set.h).
struct EmulatorHooks {
  const std::atomic<bool>* ready = nullptr;
  std::function<Status()> reset;
  const service::ReplicaSet* replicas = nullptr;
};
void RegisterEmulatorRoutes(Router& router, EmulatorHooks hooks);
// TPU VM workers (emulator extension): GET …/nodes/{node}/workers (each worker's address,
// state, SSH command, startup script) and GET …/nodes/{node}/workers/{worker}/startupScriptOutput
// ?offset=K (text/plain, the output of its last boot), and GET …/workers/{worker}/terminal, a
// WebSocket into the worker (api/terminal_session.h; opened on `threads`, bounded by
// `terminals`), under /v2 and /v2alpha1.
void RegisterWorkerRoutes(Router& router, service::NodeManager& nodes,
                          service::WorkerManager& workers, WorkerThreads& threads,
                          TerminalBudget& terminals);
// What gcloud's `tpu-vm ssh` asks of Compute Engine (api/routes_compute.cpp), under
// /compute/{v1,beta,alpha}: GET projects/{project}, POST projects/{project}/
// setCommonInstanceMetadata, GET and POST :wait of projects/{project}/global/operations/{op}.
void RegisterComputeRoutes(Router& router, service::ProjectMetadata& projects,
                           WorkerThreads& writers);
// GET /_emulator/hardware[?acceleratorType=T]: every type's engine figures and the zones offering
// it (NOT_FOUND for an unknown type), plus the zone capacity in TensorCores tpuemud runs with.
void RegisterHardwareRoutes(Router& router, const service::Catalog& catalog,
                            int64_t zone_capacity_tensorcores);

// POST /_emulator/compare (body: engine/cost/compare_request.h) and GET /_emulator/compare?...
// (the model's fields in the query): the TPU comparison of docs/cost-model.md, as JSON.
void RegisterCompareRoutes(Router& router);

// Observability (emulator extensions): GET /metrics (Prometheus text 0.0.4; aggregates only for
// a caller that may not see every project, HttpRequest::sees_every_project), GET
// /v2/projects/{project}/metrics (that project's per-node series), GET
// .../nodes/{node}/metricsReport and .../jobs/{job}/metricsReport (torch_xla's report, text/plain),
// GET .../nodes/{node}/metrics?window=3600s (utilization history), GET
// /v2/projects/{project}/events?since=&timeout=&pageSize= (long-poll up to 60s). `scheduler`
// times out event long-polls; it must be stopped before `obs` is destroyed.
void RegisterObservabilityRoutes(Router& router, service::Observability& obs,
                                 service::NodeManager& nodes, service::Scheduler& scheduler);

}  // namespace tpuemu::api
