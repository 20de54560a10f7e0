#include "daemon/app.h"

#include <future>
#include <thread>
#include <utility>

#include <spdlog/spdlog.h>

#include "api/chaos_middleware.h"
#include "api/router.h"
#include "api/routes.h"
#include "api/static_files.h"
#include "api/worker_threads.h"
#include "db/store.h"
#include "engine/compile_cache.h"
#include "engine/pool.h"
#include "service/catalog/catalog.h"
#include "service/common/scheduler.h"
#include "service/faults/chaos_rules.h"
#include "service/faults/zone_capacity.h"
#include "service/jobs/job_manager.h"
#include "service/queued_resources/reservations.h"

namespace tpuemu::daemon {

// Members are declared in dependency order, so the implicit destructor tears the graph down in
// reverse; App::Stop runs the explicit shutdown steps before that.
struct App::Graph {
  std::atomic<bool> ready{false};
  std::unique_ptr<db::Store> store;
  service::Scheduler scheduler;
  std::unique_ptr<service::NodeManager> nodes;
  std::unique_ptr<service::ReservationBook> reservations;
  std::unique_ptr<service::QueuedResourceManager> queued_resources;
  std::unique_ptr<service::ChaosRules> chaos;
  std::unique_ptr<service::ZoneCapacity> capacity;
  std::unique_ptr<service::Preempter> preempter;
  std::unique_ptr<service::MaintenanceManager> maintenance;
  std::unique_ptr<engine::Pool> pool;  // one engine pool and compile cache shared by all nodes
  engine::CompileCache compile_cache;
  std::unique_ptr<service::JobManager> jobs;
  std::unique_ptr<service::Observability> obs;
  std::unique_ptr<service::RetentionPruner> pruner;
  std::unique_ptr<api::WorkerThreads> writers;
  api::Router router;
  std::unique_ptr<api::StaticFiles> web;
  api::AsyncHandlerFn handler;  // auth (when on) around the router
  std::unique_ptr<api::HttpServer> server;
};

App::App(AppOptions options) : options_(std::move(options)), graph_(std::make_unique<Graph>()) {}

Result<std::unique_ptr<App>> App::Start(AppOptions options) {
  std::unique_ptr<App> app(new App(std::move(options)));
  if (Status s = app->Build(); !s.ok()) {
    (void)app->Stop(std::chrono::milliseconds(0));
    return s;
  }
  return app;
}

Status App::Build() {
  Graph& g = *graph_;
  Result<std::unique_ptr<db::Store>> store = db::Store::Open(options_.db_path);
  if (!store.ok()) {
    return Status(store.status().code(), "cannot open the store at " +
                                             db::Store::Describe(options_.db_path) + ": " +
                                             store.status().message());
  }
  g.store = std::move(store).value();
  TPUEMU_RETURN_IF_ERROR(g.store->ClaimExclusiveUse());
  const service::Catalog& catalog = service::Catalog::Default();
  g.nodes = std::make_unique<service::NodeManager>(*g.store, g.scheduler, catalog, options_.nodes);
  // Each injector wrote the fault's event with its change (service/faults/fault_event.h).
  // A maintenance event interrupts the job running on the node and holds its queue until it ends
  // (a job with maxRetries left runs again then; docs/faults.md); preemption reaches the jobs
  // through the node's PREEMPTED state instead.
  service::FaultListener on_fault = [&g](const service::FaultEvent& e) {
    if (g.jobs && e.kind == "MAINTENANCE_STARTED") {
      g.jobs->InterruptNodeJobs(e.resource, "interrupted by host maintenance: " + e.message);
    }
    if (g.jobs && e.kind == "MAINTENANCE_ENDED") g.jobs->ResumeNode(e.resource);
  };
  g.reservations =
      std::make_unique<service::ReservationBook>(*g.store, g.nodes->batcher(), catalog);
  g.queued_resources = std::make_unique<service::QueuedResourceManager>(
      *g.store, *g.nodes, g.scheduler, *g.reservations, catalog, options_.queued_resources);
  g.chaos = std::make_unique<service::ChaosRules>(*g.store, options_.faults.seed);
  g.capacity = std::make_unique<service::ZoneCapacity>(
      *g.store, g.nodes->quota(), catalog,
      [qr = g.queued_resources.get()](const std::string& zone) { qr->OnCapacityChanged(zone); },
      on_fault);
  g.preempter = std::make_unique<service::Preempter>(
      *g.nodes, g.scheduler,
      service::PreemptionOptions{.rate_per_hour = options_.faults.preemption_rate_per_hour,
                                 .sweep_interval_ms = options_.faults.preemption_sweep_ms,
                                 .seed = options_.faults.seed},
      on_fault);
  g.maintenance = std::make_unique<service::MaintenanceManager>(
      *g.nodes, *g.queued_resources, g.scheduler,
      service::MaintenanceOptions{.duration_ms = options_.faults.maintenance_duration_ms},
      on_fault);
  const int engine_threads = options_.engine_threads > 0
                                 ? options_.engine_threads
                                 : static_cast<int>(std::thread::hardware_concurrency());
  g.pool = std::make_unique<engine::Pool>(engine_threads);
  g.jobs = std::make_unique<service::JobManager>(*g.store, *g.nodes, g.scheduler, *g.pool,
                                                 g.compile_cache, options_.jobs);
  g.nodes->SetStateObserver(
      [jobs = g.jobs.get()](const service::Node& node, service::NodeState previous) {
        jobs->OnNodeStateChanged(node, previous);
      });
  g.nodes->AddStateObserver(
      [qr = g.queued_resources.get()](const service::Node& node, service::NodeState previous) {
        qr->OnNodeStateChanged(node, previous);
      });
  // Events, utilization history, Prometheus and the torch_xla-style reports (hooks observers).
  // It becomes the nodes' and jobs' EventSink; queued resources and faults write through the
  // nodes'.
  g.obs = std::make_unique<service::Observability>(*g.store, *g.nodes, *g.jobs, *g.pool,
                                                   g.compile_cache, options_.observability);
  g.capacity->SetEventSink(&g.obs->events());
  g.pruner = std::make_unique<service::RetentionPruner>(*g.store, options_.retention);

  // Mutations block until their group commit: they run on writer threads, never on IO threads.
  g.writers = std::make_unique<api::WorkerThreads>(options_.writer_threads);
  api::RegisterEmulatorRoutes(g.router, {.ready = &g.ready, .reset = [&g] {
                                           Status s = g.nodes->Reset();
                                           if (!s.ok()) return s;
                                           g.obs->Reset();
                                           g.queued_resources->Clear();
                                           g.chaos->Clear();
                                           g.preempter->Start();  // the scheduler was cleared
                                           return s;
                                         }});
  api::RegisterNodeRoutes(g.router, *g.nodes, *g.maintenance, *g.writers);
  api::RegisterQueuedResourceRoutes(g.router, *g.queued_resources, *g.maintenance, *g.reservations,
                                    *g.writers);
  api::RegisterOperationRoutes(g.router, g.nodes->operations(), *g.writers);
  api::RegisterCatalogRoutes(g.router, catalog);
  api::RegisterDiscoveryRoutes(g.router);
  api::RegisterFaultRoutes(g.router, {.preempter = g.preempter.get(),
                                      .maintenance = g.maintenance.get(),
                                      .chaos = g.chaos.get(),
                                      .capacity = g.capacity.get(),
                                      .reservations = g.reservations.get(),
                                      .queued_resources = g.queued_resources.get(),
                                      .writers = g.writers.get()});
  api::RegisterJobRoutes(g.router, *g.jobs, g.scheduler, *g.writers);
  api::RegisterObservabilityRoutes(g.router, *g.obs, *g.nodes, g.scheduler);
  api::RegisterHardwareRoutes(g.router, catalog, options_.nodes.zone_capacity_tensorcores);
  api::RegisterCompareRoutes(g.router);
  // The dashboard: GET requests no API route matches are static files.
  if (!options_.web_dir.empty()) {
    g.web = std::make_unique<api::StaticFiles>(options_.web_dir);
    if (!options_.chartjs_dir.empty()) g.web->Mount("/vendor/chart.js/", options_.chartjs_dir);
    g.router.SetFallback([web = g.web.get()](const api::HttpRequest& req, const api::PathParams&) {
      return web->Serve(req);
    });
  }
  // Chaos rules fail API calls before they reach the router; auth wraps both, so that no route
  // can be reached around it (api/auth.h) and unauthenticated calls never count as chaos hits.
  // A chaos rule firing changes nothing stored: its event is a transaction of its own.
  service::FaultListener on_chaos = [&g, on_fault](const service::FaultEvent& e) {
    (void)g.obs->events().Record(service::FaultEventRow(e));
    on_fault(e);
  };
  api::AsyncHandlerFn routed = api::WithChaos(*g.chaos, on_chaos, g.router.AsHandler());
  g.handler = options_.auth ? api::RequireAuth(*options_.auth, std::move(routed)) : routed;

  if (options_.serve_http) {
    const bool log_requests = options_.log_requests;
    g.server = std::make_unique<api::HttpServer>(
        options_.http, g.handler, [obs = g.obs.get(), log_requests](const api::AccessLogEntry& e) {
          obs->http().Observe(e.method, e.route, e.status, e.latency_seconds);
          if (log_requests) {
            spdlog::info("{} {} => {} ({:.3f} ms)", e.method, e.route.empty() ? "-" : e.route,
                         e.status, e.latency_seconds * 1000);
          }
        });
    TPUEMU_RETURN_IF_ERROR(g.server->Start());
  }
  // /healthz answers while we recover; /readyz turns 200 only after recovery.
  if (Status s = g.nodes->Recover(); !s.ok()) {
    return Status(s.code(), "node recovery failed: " + s.message());
  }
  if (Status s = g.capacity->Load(); !s.ok()) {
    return Status(s.code(), "loading zone capacities failed: " + s.message());
  }
  if (Status s = g.chaos->Load(); !s.ok()) {
    return Status(s.code(), "loading chaos rules failed: " + s.message());
  }
  if (Status s = g.queued_resources->Recover(); !s.ok()) {
    return Status(s.code(), "queued resource recovery failed: " + s.message());
  }
  // Jobs first: a node still under maintenance holds its queue until the maintenance ends, and
  // that end is scheduled by the maintenance recovery.
  if (Status s = g.jobs->Recover(); !s.ok()) {
    return Status(s.code(), "job recovery failed: " + s.message());
  }
  if (Status s = g.maintenance->Recover(); !s.ok()) {
    return Status(s.code(), "maintenance recovery failed: " + s.message());
  }
  g.preempter->Start();
  g.obs->Start();
  g.pruner->Start();
  g.ready = true;
  return Status::Ok();
}

Status App::Stop(std::chrono::milliseconds drain) {
  if (stopped_) return Status::Ok();
  stopped_ = true;
  Graph& g = *graph_;
  g.ready = false;
  // Jobs start stopping (cooperatively, within a tile of work) while HTTP drains; none starts.
  if (g.jobs) g.jobs->Interrupt();
  if (g.server) g.server->Stop(drain);
  g.scheduler.Stop();
  if (g.pruner) g.pruner->Stop();  // within its current transaction
  if (g.jobs) g.jobs->Shutdown();  // interrupted jobs go back to QUEUED: re-run on restart
  if (g.obs) g.obs->Stop();        // after everything that notifies it
  return g.store ? g.store->Close() : Status::Ok();
}

App::~App() {
  Status closed = Stop(std::chrono::seconds(2));
  if (!closed.ok()) spdlog::error("closing the store: {}", closed.ToString());
}

uint16_t App::port() const { return graph_->server ? graph_->server->port() : 0; }

int App::active_connections() const {
  return graph_->server ? graph_->server->active_connections() : 0;
}

api::HttpResponse App::Handle(const api::HttpRequest& request) const {
  std::promise<api::HttpResponse> answered;
  std::future<api::HttpResponse> response = answered.get_future();
  // The responder may be copied and called on another thread (long-polls); it owns the promise.
  auto promise = std::make_shared<std::promise<api::HttpResponse>>(std::move(answered));
  graph_->handler(request, [promise](api::HttpResponse r) { promise->set_value(std::move(r)); });
  return response.get();
}

service::NodeManager& App::nodes() { return *graph_->nodes; }
service::QueuedResourceManager& App::queued_resources() { return *graph_->queued_resources; }
service::Preempter& App::preempter() { return *graph_->preempter; }
service::MaintenanceManager& App::maintenance() { return *graph_->maintenance; }
service::JobManager& App::jobs() { return *graph_->jobs; }
service::Observability& App::obs() { return *graph_->obs; }

}  // namespace tpuemu::daemon
