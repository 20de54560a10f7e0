#include "daemon/app.h"
#include "daemon/worker_settings.h"

#include <unistd.h>

#include <future>
#include <thread>
#include <utility>
#include <vector>

#include <spdlog/spdlog.h>

#include "api/chaos_middleware.h"
#include "api/metadata_server.h"
#include "api/router.h"
#include "api/routes.h"
#include "api/static_files.h"
#include "api/terminal_session.h"
#include "api/worker_api.h"
#include "api/worker_threads.h"
#include "db/change_payloads.h"
#include "db/store.h"
#include "engine/frontend/compile_cache.h"
#include "engine/runtime/pool.h"
#include "service/catalog/catalog.h"
#include "service/common/scheduler.h"
#include "service/faults/chaos_rules.h"
#include "service/faults/zone_capacity.h"
#include "service/jobs/job_manager.h"
#include "service/projects/project_metadata.h"
#include "service/queued_resources/reservations.h"
#include "service/workers/worker_manager.h"

namespace tpuemu::daemon {

// Members are declared in dependency order, so the implicit destructor tears the graph down in
// reverse; App::Stop runs the explicit shutdown steps before that.
struct App::Graph {
  std::atomic<bool> ready{false};
  std::unique_ptr<db::Store> store;
  std::unique_ptr<service::ReplicaSet> replicas;
  service::Scheduler scheduler;
  std::unique_ptr<service::WritePath> writes;  // lent to the managers below
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
  std::unique_ptr<api::TerminalBudget> terminals;
  api::Router router;
  std::unique_ptr<api::StaticFiles> web;
  api::AsyncHandlerFn handler;  // auth (when on) around the router
  api::AsyncHandlerFn routed;   // the router (with chaos rules), without auth: workers' API
  std::unique_ptr<api::HttpServer> server;
  std::unique_ptr<service::ProjectMetadata> projects;
  // After the server: destroyed first, its workers' metadata listeners leave a live server.
  std::unique_ptr<service::WorkerManager> workers;
};

namespace {

// Connection budgets of a slice network's listeners (HttpServer::AddListener's limits), apart
// from the API's --max-connections: per worker (its address on the network), and in all.
constexpr int kWorkerMetadataConnections = 64;
constexpr int kNetworkMetadataConnections = 2048;
constexpr int kWorkerApiConnections = 32;
constexpr int kNetworkApiConnections = 512;

// "host:port" as other machines reach this one: the host name when it listens on every address.
std::string ServedAt(const std::string& host, int port) {
  std::string shown = host;
  if (shown.empty() || shown == "0.0.0.0" || shown == "::") {
    char name[256] = {};
    shown = gethostname(name, sizeof name - 1) == 0 && name[0] != '\0' ? name : "localhost";
  }
  return shown + ":" + std::to_string(port);
}

// What POST /_emulator/reset forgets besides the store (which the replica that was asked wipes;
// the others hear of it on the change feed and forget too).
void ForgetAfterReset(App::Graph& g) {
  g.obs->Reset();
  g.queued_resources->Clear();
  g.chaos->Clear();
  g.preempter->Start();  // the scheduler was cleared
}

// What the other replicas' commits mean here (service/replicas/replica_set.h). The payloads are
// parsed in db/ (db/change_payloads.h); one that does not parse is not a trigger's and is ignored.
void OnRemoteChange(App::Graph& g, const db::Change& change) {
  if (change.channel == db::kEventsChannel) {
    Result<db::EventChange> e = db::ParseEventChange(change.payload);
    if (!e.ok()) return;
    db::EventRow event;
    event.project = e->project;
    event.seq = e->seq;
    g.obs->events().Published(event);  // wakes the long-polls waiting here
  } else if (change.channel == db::kJobsChannel) {
    Result<db::JobChange> c = db::ParseJobChange(change.payload);
    if (!c.ok()) return;
    g.jobs->OnRemoteChange(c->name, c->state, c->owner);
    // The utilization history counts every replica's jobs (one replica writes it).
    if (c->owner != g.replicas->id() && g.replicas->leads()) {
      Result<service::Job> job = g.jobs->Get(c->name);
      Result<service::JobState> state = service::ParseJobState(c->state);
      if (job.ok() && state.ok()) {
        job->state = *state;  // as of this change (the row may have moved on)
        g.obs->utilization().OnJobStateChanged(*job, *state == service::JobState::kRunning
                                                         ? service::JobState::kQueued
                                                         : service::JobState::kRunning);
      }
    }
  } else if (change.channel == db::kNodesChannel) {
    Result<db::NodeChange> c = db::ParseNodeChange(change.payload);
    if (!c.ok() || c->owner == g.replicas->id()) return;  // this replica's own write
    g.nodes->Forget(c->name);
    if (!c->has_key()) return;
    if (c->deleted()) {
      g.workers->OnRemoteNodeChange(c->name, nullptr);
      return;
    }
    Result<service::Node> node = g.nodes->Get(service::NodeKey{c->project, c->zone, c->node_id});
    if (node.ok()) {
      g.jobs->OnRemoteNodeChange(*node);
      g.workers->OnRemoteNodeChange(c->name, &*node);
    }
  } else if (change.channel == db::kSettingsChannel) {
    Result<db::SettingsChange> c = db::ParseSettingsChange(change.payload);
    if (!c.ok() || c->replica == g.replicas->id()) return;  // this replica's own write or reset
    if (c->reset) {
      g.scheduler.Clear();
      g.nodes->ForgetAll();
      ForgetAfterReset(g);
      return;
    }
    (void)g.capacity->Load();
    (void)g.chaos->Load();
  }
}

service::ReplicaHooks ReplicaHooksFor(App::Graph& g) {
  return {.on_orphans =
              [&g] {
                Result<std::vector<service::Node>> nodes = g.nodes->Adopt(false);
                if (nodes.ok()) g.maintenance->ScheduleTimers(*nodes);
                (void)g.queued_resources->Recover();  // idempotent: every reconcile reads afresh
                Status jobs = g.jobs->Adopt(false);
                if (!nodes.ok() || !jobs.ok()) {
                  spdlog::warn("adopting a replica's work: nodes {}, jobs {}",
                               nodes.status().ToString(), jobs.ToString());
                }
              },
          .on_tick = [&g] { g.jobs->RetryBlocked(); },
          .on_change = [&g](const db::Change& change) { OnRemoteChange(g, change); },
          .on_resync =
              [&g] {
                g.nodes->ForgetAll();
                (void)g.capacity->Load();
                (void)g.chaos->Load();
                g.jobs->RetryBlocked();
              }};
}

}  // namespace

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
  // Joined before anything writes: what this replica writes is its own (nodes.owner, jobs.owner).
  const bool shared = g.store->backend() == db::Backend::kPostgres;
  service::ReplicaOptions replica = options_.replica;
  if (replica.id.empty()) replica.id = service::DefaultReplicaId(*g.store, options_.http.port);
  if (replica.address.empty()) replica.address = ServedAt(options_.http.host, options_.http.port);
  g.replicas = std::make_unique<service::ReplicaSet>(*g.store, options_.db_path, replica);
  TPUEMU_RETURN_IF_ERROR(g.replicas->Join());
  const service::Catalog& catalog = service::Catalog::Default();
  service::NodeManagerOptions node_options = options_.nodes;
  node_options.replica_id = g.replicas->id();
  node_options.shared_store = shared;
  g.writes = std::make_unique<service::WritePath>(*g.store, catalog,
                                                  service::WritePathOptionsOf(node_options));
  g.nodes = std::make_unique<service::NodeManager>(*g.store, *g.writes, g.scheduler, catalog,
                                                   node_options);
  // Each injector wrote the fault's event with its change (service/faults/fault_event.h).
  // A maintenance event interrupts the job running on the node and holds its queue until it ends
  // (a job with maxRetries left runs again then; docs/faults.md); preemption reaches the jobs
  // through the node's PREEMPTED state instead.
  service::FaultListener on_fault = [&g](const service::FaultEvent& e) {
    if (g.jobs && e.kind == "MAINTENANCE_STARTED") {
      g.jobs->InterruptNodeJobs(e.resource, "interrupted by host maintenance: " + e.message);
    }
    if (g.jobs && e.kind == "MAINTENANCE_ENDED") g.jobs->ResumeNode(e.resource);
    if (g.workers && (e.kind == "MAINTENANCE_STARTED" || e.kind == "MAINTENANCE_ENDED")) {
      g.workers->OnMaintenance(e.resource, e.kind == "MAINTENANCE_STARTED");
    }
  };
  g.reservations =
      std::make_unique<service::ReservationBook>(*g.store, g.writes->batcher(), catalog);
  g.queued_resources = std::make_unique<service::QueuedResourceManager>(
      *g.store, *g.writes, *g.nodes, *g.reservations, catalog, options_.queued_resources);
  g.chaos = std::make_unique<service::ChaosRules>(*g.store, options_.faults.seed);
  g.capacity = std::make_unique<service::ZoneCapacity>(
      *g.store, g.writes->quota(), catalog,
      [qr = g.queued_resources.get()](const std::string& zone) { qr->OnCapacityChanged(zone); },
      on_fault);
  g.preempter = std::make_unique<service::Preempter>(
      *g.nodes, g.scheduler,
      service::PreemptionOptions{.rate_per_hour = options_.faults.preemption_rate_per_hour,
                                 .sweep_interval_ms = options_.faults.preemption_sweep_ms,
                                 .seed = options_.faults.seed},
      on_fault);
  g.maintenance = std::make_unique<service::MaintenanceManager>(
      *g.writes, *g.nodes, *g.queued_resources, g.scheduler,
      service::MaintenanceOptions{.duration_ms = options_.faults.maintenance_duration_ms},
      on_fault);
  const int engine_threads = options_.engine_threads > 0
                                 ? options_.engine_threads
                                 : static_cast<int>(std::thread::hardware_concurrency());
  g.pool = std::make_unique<engine::Pool>(engine_threads);
  g.jobs = std::make_unique<service::JobManager>(*g.store, *g.nodes, g.scheduler, *g.pool,
                                                 g.compile_cache, options_.jobs);
  g.jobs->SetReplica(g.replicas->id(), shared);
  g.jobs->SetWriteBatcher(&g.writes->batcher());
  g.nodes->SetStateObserver(
      [jobs = g.jobs.get()](const service::Node& node, service::NodeState previous) {
        jobs->OnNodeStateChanged(node, previous);
      });
  g.nodes->AddStateObserver(
      [qr = g.queued_resources.get()](const service::Node& node, service::NodeState previous) {
        qr->OnNodeStateChanged(node, previous);
      });
  // Events, utilization history, Prometheus and the torch_xla-style reports (hooks observers).
  // It becomes the jobs' EventSink and the write path's (nodes, queued resources and faults).
  g.obs = std::make_unique<service::Observability>(*g.store, *g.nodes, *g.jobs, *g.pool,
                                                   g.compile_cache, options_.observability);
  g.writes->SetEventSink(&g.obs->events());
  g.capacity->SetEventSink(&g.obs->events());
  g.pruner = std::make_unique<service::RetentionPruner>(*g.store, options_.retention);

  // TPU VM workers: sandboxes that follow their node's state (service/workers/).
  g.projects = std::make_unique<service::ProjectMetadata>(*g.store);
  service::WorkerHooks worker_hooks{
      // Each slice network's own listeners, with budgets of their own: one worker's
      // long-polls spend its share, never the API's connections or another worker's.
      .serve_network =
          [&g](const std::string& network, int metadata_fd, int api_fd,
               const std::string& project) {
            if (!g.server) {
              close(metadata_fd);
              close(api_fd);
              return Status::FailedPrecondition("no HTTP server");
            }
            Status served =
                g.server->AddListener(metadata_fd, network + " metadata",
                                      api::MetadataServerHandler(*g.workers, g.scheduler, network),
                                      {.max_connections = kNetworkMetadataConnections,
                                       .max_connections_per_peer = kWorkerMetadataConnections});
            if (!served.ok()) {
              close(api_fd);
              return served;
            }
            return g.server->AddListener(api_fd, network + " api",
                                         api::WorkerApiHandler(project, g.routed),
                                         {.max_connections = kNetworkApiConnections,
                                          .max_connections_per_peer = kWorkerApiConnections});
          },
      .unserve_network =
          [&g](const std::string& network) {
            if (!g.server) return;
            g.server->RemoveListener(network + " metadata");
            g.server->RemoveListener(network + " api");
          },
      .record_event = [&g](db::EventRow event) { (void)g.obs->events().Record(std::move(event)); }};
  g.workers = std::make_unique<service::WorkerManager>(
      *g.nodes, *g.projects, WorkerOptionsFor(options_.workers), std::move(worker_hooks));
  if (options_.workers.mode == "auto") {
    g.nodes->SetSandboxPolicy(
        [w = g.workers.get()](const service::Node& node) { return w->Decide(node); },
        [w = g.workers.get()](const service::Node& node) { w->Abandon(node); });
  }
  if (g.workers->options().enabled) {
    // The host's capacity is every zone's: a queued resource waits for it as for TensorCores.
    g.workers->SetOnCapacityFreed(
        [qr = g.queued_resources.get()] { qr->OnCapacityChanged(std::string("-")); });
    g.queued_resources->SetHostRoom(
        {.reserve =
             [w = g.workers.get()](const std::string& name, const std::vector<int>& workers) {
               return w->ReserveForQueuedResource(name, workers);
             },
         .release =
             [w = g.workers.get()](const std::string& name) { w->ReleaseQueuedResource(name); }});
  }
  if (g.workers->options().enabled) {
    g.nodes->SetReadyGate(
        [w = g.workers.get()](const std::string& name) { return w->Ready(name); });
    g.nodes->AddStateObserver(
        [w = g.workers.get()](const service::Node& node, service::NodeState previous) {
          w->OnNodeStateChanged(node, previous);
        });
  }

  // Mutations block until their group commit: they run on writer threads, never on IO threads.
  g.writers = std::make_unique<api::WorkerThreads>(options_.writer_threads);
  api::RegisterEmulatorRoutes(g.router, {.ready = &g.ready,
                                         .reset =
                                             [&g] {
                                               g.workers->Reset();
                                               g.projects->Forget();
                                               Status s = g.nodes->Reset();
                                               if (!s.ok()) return s;
                                               ForgetAfterReset(g);
                                               return g.replicas->AnnounceReset();
                                             },
                                         .replicas = g.replicas.get()});
  api::RegisterNodeRoutes(g.router, *g.nodes, *g.maintenance, *g.writers, g.workers.get());
  g.terminals = std::make_unique<api::TerminalBudget>(options_.max_terminals,
                                                      options_.max_terminals_per_worker);
  api::RegisterWorkerRoutes(g.router, *g.nodes, *g.workers, *g.writers, *g.terminals);
  api::RegisterComputeRoutes(g.router, *g.projects, *g.writers);
  api::RegisterQueuedResourceRoutes(g.router, *g.queued_resources, *g.maintenance, *g.reservations,
                                    *g.writers);
  api::RegisterOperationRoutes(g.router, g.writes->operations(), *g.writers);
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
    if (!options_.xterm_dir.empty()) g.web->Mount("/vendor/xterm/", options_.xterm_dir);
    if (!options_.xterm_lib_dir.empty()) g.web->Mount("/vendor/xterm/lib/", options_.xterm_lib_dir);
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
  g.routed = api::WithChaos(*g.chaos, on_chaos, g.router.AsHandler());
  g.handler = options_.auth ? api::RequireAuth(*options_.auth, g.routed) : g.routed;

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
  if (g.server) {
    TPUEMU_RETURN_IF_ERROR(g.replicas->SetAddress(ServedAt(options_.http.host, g.server->port())));
    // The workers share this host's network: they reach the API on its loopback address.
    const std::string& host = options_.http.host;
    const bool wildcard = host.empty() || host == "0.0.0.0" || host == "::";
    g.workers->SetApiEndpoint("http://" + (wildcard ? std::string("127.0.0.1") : host) + ":" +
                              std::to_string(g.server->port()));
  }
  if (Status s = g.workers->Recover(); !s.ok()) {
    return Status(s.code(), "worker recovery failed: " + s.message());
  }
  TPUEMU_RETURN_IF_ERROR(g.replicas->Start(ReplicaHooksFor(g)));
  g.preempter->Start();
  g.obs->utilization().SetLeader([replicas = g.replicas.get()] { return replicas->leads(); });
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
  // No more adoptions or notifications: their hooks use what is stopped below.
  if (g.replicas) g.replicas->Stop();
  // Jobs start stopping (cooperatively, within a tile of work) while HTTP drains; none starts.
  if (g.jobs) g.jobs->Interrupt();
  // The workers' processes end with tpuemud (their files stay for the next start).
  if (g.workers) g.workers->Stop();
  if (g.server) g.server->Stop(drain);
  g.scheduler.Stop();
  if (g.queued_resources) g.queued_resources->Stop();
  if (g.pruner) g.pruner->Stop();  // within its current transaction
  if (g.jobs) g.jobs->Shutdown();  // interrupted jobs go back to QUEUED: re-run on restart
  if (g.obs) g.obs->Stop();        // after everything that notifies it
  // Last: the other replicas adopt this one's nodes and re-queued jobs at once.
  if (g.replicas) g.replicas->Leave();
  // The node writes' thread calls every state observer (jobs, queued resources, workers): it ends
  // before any of them is destroyed with the graph.
  if (g.writes) g.writes->batcher().Stop();
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

std::vector<api::RouteInfo> App::Routes() const { return graph_->router.Routes(); }

service::WritePath& App::write_path() { return *graph_->writes; }
service::NodeManager& App::nodes() { return *graph_->nodes; }
service::QueuedResourceManager& App::queued_resources() { return *graph_->queued_resources; }
service::Preempter& App::preempter() { return *graph_->preempter; }
service::MaintenanceManager& App::maintenance() { return *graph_->maintenance; }
service::JobManager& App::jobs() { return *graph_->jobs; }
service::Observability& App::obs() { return *graph_->obs; }
service::WorkerManager& App::workers() { return *graph_->workers; }

}  // namespace tpuemu::daemon
