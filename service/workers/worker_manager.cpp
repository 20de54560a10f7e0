#include "service/workers/worker_manager.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>

#include <spdlog/spdlog.h>

#include "service/common/clock.h"
#include "service/workers/ssh_probe.h"
#include "service/workers/worker_files.h"

namespace tpuemu::service {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;

}  // namespace

WorkerManager::WorkerManager(NodeManager& nodes, ProjectMetadata& projects, WorkerOptions options,
                             WorkerHooks hooks)
    : nodes_(nodes),
      projects_(projects),
      options_(std::move(options)),
      hooks_(std::move(hooks)),
      capacity_({.workers = options_.max_workers,
                 .memory_bytes = options_.memory_budget_bytes,
                 .pids = options_.pids_budget,
                 .disk_bytes = options_.disk_budget_bytes},
                {.memory_bytes = options_.memory_limit_bytes,
                 .pids = options_.pids_limit,
                 .disk_bytes = options_.support.disks ? options_.disk_bytes : 0}) {
  if (!options_.enabled) return;
  reactor_ = std::make_unique<sandbox::Reactor>();
  for (int i = 0; i < std::max(1, options_.threads); ++i) {
    pool_.emplace_back([this] {
      for (;;) {
        std::shared_ptr<NodeWorkers> nw;
        {
          std::unique_lock lock(pool_mu_);
          pool_cv_.wait(lock, [&] { return pool_stopping_ || !ready_queues_.empty(); });
          if (ready_queues_.empty()) return;
          nw = std::move(ready_queues_.front());
          ready_queues_.pop_front();
        }
        for (;;) {
          std::function<void()> work;
          {
            std::lock_guard lock(nw->queue_mu);
            if (nw->queue.empty()) {
              nw->draining = false;
              break;
            }
            work = std::move(nw->queue.front());
            nw->queue.pop_front();
          }
          work();
        }
      }
    });
  }
  sync_thread_ = std::thread([this] { SyncLoop(); });
  StartSshThreads();
  project_listener_ = projects_.AddListener(
      [this](const std::string& project) { OnProjectMetadataChanged(project); });
}

WorkerManager::~WorkerManager() { Stop(); }

void WorkerManager::Post(const std::shared_ptr<NodeWorkers>& nw, std::function<void()> work) {
  {
    std::lock_guard lock(nw->queue_mu);
    nw->queue.push_back(std::move(work));
    if (nw->draining) return;
    nw->draining = true;
  }
  std::lock_guard lock(pool_mu_);
  if (pool_stopping_) return;
  ready_queues_.push_back(nw);
  pool_cv_.notify_one();
}

std::shared_ptr<WorkerManager::NodeWorkers> WorkerManager::Entry(const Node& node) {
  std::lock_guard lock(mu_);
  auto& nw = nodes_by_name_[node.key.Name()];
  if (!nw) {
    nw = std::make_shared<NodeWorkers>();
    nw->name = node.key.Name();
    for (int w = 0; w < node.type.workers; ++w) {
      Worker worker;
      worker.index = w;
      worker.ip = WorkerExternalAddress(node, w);
      nw->workers.push_back(std::move(worker));
    }
  }
  nw->node = node;
  return nw;
}

bool WorkerManager::Ready(const std::string& node_name) {
  SyncAccountsSoon(node_name);  // a transition completes: the node's metadata may have changed
  std::lock_guard lock(mu_);
  auto it = nodes_by_name_.find(node_name);
  if (it == nodes_by_name_.end()) return true;
  const NodeWorkers& nw = *it->second;
  return !(nw.want_running && nw.booting && NowUnixMs() < nw.boot_deadline_ms);
}

void WorkerManager::OnNodeStateChanged(const Node& node, NodeState previous) {
  (void)previous;
  if (!options_.enabled || !node.sandbox.enabled) return;
  {
    std::lock_guard lock(mu_);
    if (stopped_) return;
  }
  const milliseconds grace(options_.stop_grace_ms);
  switch (node.state) {
    case NodeState::kCreating:
    case NodeState::kStarting:
    case NodeState::kReady: {
      auto nw = Entry(node);
      {
        std::lock_guard lock(mu_);
        if (nw->want_running && node.state == NodeState::kReady) return;  // booted or booting
        nw->want_running = true;
        nw->booting = true;
        nw->boot_deadline_ms = NowUnixMs() + options_.boot_timeout_ms;
      }
      Post(nw, [this, nw] { Boot(nw); });
      return;
    }
    case NodeState::kStopping:
    case NodeState::kStopped:
    case NodeState::kDeleting:
    case NodeState::kPreempted: {
      auto nw = Entry(node);
      {
        std::lock_guard lock(mu_);
        nw->want_running = false;
        nw->booting = false;
      }
      std::string why = node.state == NodeState::kPreempted  ? "the node was preempted"
                        : node.state == NodeState::kDeleting ? "the node is being deleted"
                                                             : "the node was stopped";
      Post(nw, [this, nw, grace, why] { StopWorkers(nw, grace, why); });
      // Nothing brings a DELETING node back: its room is free before the delete call returns.
      if (node.state == NodeState::kDeleting) ReleaseNode(node);
      return;
    }
    case NodeState::kUnspecified: {  // deleted
      auto nw = Entry(node);
      {
        std::lock_guard lock(mu_);
        nw->want_running = false;
        nw->booting = false;
      }
      Post(nw, [this, nw] {
        StopWorkers(nw, milliseconds(0), "the node was deleted");
        Wipe(nw);
      });
      ReleaseNode(node);  // already at DELETING, unless another replica deleted it
      return;
    }
    default:
      return;
  }
}

void WorkerManager::OnRemoteNodeChange(const std::string& name, const Node* node) {
  if (!options_.enabled) return;
  Node known;
  {
    std::lock_guard lock(mu_);
    auto it = nodes_by_name_.find(name);
    if (it == nodes_by_name_.end() || stopped_) return;  // its workers run elsewhere, if anywhere
    known = it->second->node;
  }
  if (node == nullptr) {
    known.state = NodeState::kUnspecified;
    OnNodeStateChanged(known, NodeState::kUnspecified);
    return;
  }
  OnNodeStateChanged(*node, known.state);
  SyncAccountsSoon(name);  // its metadata may have changed
}

void WorkerManager::OnMaintenance(const std::string& node_name, bool started) {
  if (!options_.enabled) return;
  std::shared_ptr<NodeWorkers> nw;
  {
    std::lock_guard lock(mu_);
    auto it = nodes_by_name_.find(node_name);
    if (it == nodes_by_name_.end() || stopped_) return;
    nw = it->second;
    if (started) {
      nw->want_running = false;
      nw->booting = false;
    } else {
      if (nw->node.state != NodeState::kReady) return;
      nw->want_running = true;
      nw->booting = true;
      nw->boot_deadline_ms = NowUnixMs() + options_.boot_timeout_ms;
    }
  }
  if (started) {
    Post(nw,
         [this, nw] { StopWorkers(nw, milliseconds(options_.stop_grace_ms), "host maintenance"); });
  } else {
    Post(nw, [this, nw] { Boot(nw); });
  }
}

void WorkerManager::SetApiEndpoint(std::string endpoint) {
  std::lock_guard lock(mu_);
  api_endpoint_ = std::move(endpoint);
}

void WorkerManager::Event(const Node& node, int w, const std::string& state,
                          const std::string& message) {
  if (!hooks_.record_event) return;
  db::EventRow e;
  e.project = node.key.project;
  e.kind = "worker";
  e.resource = node.key.Name() + "/workers/" + std::to_string(w);
  e.zone = node.key.zone;
  e.state = state;
  e.message = "worker " + std::to_string(w) + " of " + node.key.node_id + ": " + message;
  hooks_.record_event(std::move(e));
}

void WorkerManager::Boot(const std::shared_ptr<NodeWorkers>& nw) {
  Node node;
  {
    std::lock_guard lock(mu_);
    if (!nw->want_running || stopped_) return;
    node = nw->node;
  }
  // The freshest node (metadata may have changed since the observer saw it).
  if (Result<Node> fresh = nodes_.Get(node.key); fresh.ok()) node = *fresh;
  Result<std::shared_ptr<Network>> network = AcquireNetwork(node);
  if (!network.ok()) {
    spdlog::warn("the network of {}: {}", node.key.Name(), network.status().message());
    for (int w = 0; w < node.type.workers; ++w) {
      Event(node, w, "FAILED",
            "its slice network could not be made: " + network.status().message());
    }
  } else {
    std::lock_guard lock(mu_);
    nw->network = *network;
  }
  const GuestContext context = ContextFor(node);
  std::vector<std::future<void>> boots;
  for (int w = 0; w < node.type.workers; ++w) {
    boots.push_back(std::async(std::launch::async, [&, w] { BootWorker(nw, node, w, context); }));
  }
  for (auto& b : boots) b.get();
  (void)SyncAccounts(nw, node, /*force=*/true);
  for (int w = 0; w < node.type.workers; ++w) StartStartupScript(nw, node, w);
  std::lock_guard lock(mu_);
  nw->booting = false;
}

void WorkerManager::BootWorker(const std::shared_ptr<NodeWorkers>& nw, const Node& node, int w,
                               const GuestContext& context) {
  {
    std::lock_guard lock(mu_);
    Worker& worker = nw->workers[w];
    if (worker.state == WorkerState::kRunning && worker.box && worker.box->Alive()) return;
    worker.state = WorkerState::kBooting;
    worker.error.clear();
  }
  const auto started = std::chrono::steady_clock::now();
  const WorkerPaths paths = PathsOf(options_.dir, node, w);
  const std::string ip = WorkerExternalAddress(node, w);  // where the host reaches it
  auto failed = [&](const std::string& why) {
    {
      std::lock_guard lock(mu_);
      nw->workers[w].state = WorkerState::kFailed;
      nw->workers[w].error = why;
    }
    spdlog::warn("worker {} of {}: {}", w, node.key.Name(), why);
    Event(node, w, "FAILED", why);
  };
  Result<std::vector<sandbox::Bind>> binds =
      WriteWorkerFiles(options_.support, paths, node, w, context);
  if (!binds.ok()) return failed("boot failed: " + binds.status().message());
  sandbox::BootSpec spec;
  spec.dir = paths.dir;
  spec.hostname = WorkerHostname(node, w);
  spec.binds = std::move(binds).value();
  spec.cgroup_name = node.uid + "-w" + std::to_string(w) + "-" + std::to_string(NowUnixMs());
  spec.memory_limit_bytes = options_.memory_limit_bytes;
  spec.pids_limit = options_.pids_limit;
  spec.disk_bytes = options_.disk_bytes;
  spec.host_free_floor_bytes = options_.disk_floor_bytes;
  spec.tpu = TpuDevicesOf(node);
  {
    std::lock_guard lock(mu_);
    if (nw->network) spec.network_pid = nw->network->slice->pid();
  }
  // The whole range is one link: a multislice's nodes are blocks of it too.
  const std::string subnet = WorkerSubnet(node);
  spec.address = WorkerIpAddress(node, w) + subnet.substr(subnet.find('/'));
  Result<std::unique_ptr<sandbox::WorkerBox>> box =
      sandbox::WorkerBox::Boot(options_.support, spec);
  if (!box.ok()) return failed("boot failed: " + box.status().message());
  std::shared_ptr<sandbox::WorkerBox> shared(std::move(box).value());
  {
    std::lock_guard lock(mu_);
    nw->workers[w].box = shared;
  }
  const std::string name = node.key.Name();
  Result<sandbox::Reactor::Listening> listening = reactor_->Listen(
      ip, options_.ssh_port, [this, name, w](int fd) { OnSshConnection(name, w, fd); });
  if (!listening.ok()) {
    shared->Kill();
    return failed("SSH cannot listen: " + listening.status().message());
  }
  {
    std::lock_guard lock(mu_);
    nw->workers[w].ssh_listener = listening->id;
  }
  Result<std::string> banner = ReadSshBanner(ip, options_.ssh_port, milliseconds(10000));
  if (!banner.ok()) return failed("sshd does not answer: " + banner.status().message());
  const auto took =
      std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - started);
  {
    std::lock_guard lock(mu_);
    if (nw->workers[w].state == WorkerState::kBooting) nw->workers[w].state = WorkerState::kRunning;
  }
  Event(node, w, "RUNNING",
        "booted in " + std::to_string(took.count()) + " ms; SSH at " + ip + ":" +
            std::to_string(options_.ssh_port) + " (" + *banner + ")");
}

void WorkerManager::StopWorkers(const std::shared_ptr<NodeWorkers>& nw, milliseconds grace,
                                const std::string& why) {
  Node node;
  std::vector<std::pair<int, std::shared_ptr<sandbox::WorkerBox>>> boxes;
  std::vector<int> listeners;
  {
    std::lock_guard lock(mu_);
    node = nw->node;
    for (Worker& worker : nw->workers) {
      if (worker.ssh_listener) listeners.push_back(worker.ssh_listener);
      worker.ssh_listener = 0;
      if (worker.box) boxes.emplace_back(worker.index, worker.box);
    }
  }
  // No new logins while the processes end (the Reactor calls back under mu_: not under it here).
  for (int id : listeners) reactor_->Unlisten(id);
  std::vector<std::future<void>> stops;
  for (auto& [w, box] : boxes) {
    stops.push_back(std::async(std::launch::async, [&, w = w, box = box] {
      const bool alive = box->Alive();
      const auto started = std::chrono::steady_clock::now();
      box->Stop(grace);
      const auto took =
          std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - started);
      if (!alive) return;
      if (grace.count() > 0 && took >= grace) {
        Event(node, w, "KILLED",
              why + ": processes still running after the " + std::to_string(grace.count()) +
                  " ms grace were killed (SIGKILL)");
      } else {
        Event(
            node, w, "STOPPED",
            why + ": every process ended" + (grace.count() > 0 ? " after SIGTERM" : " (SIGKILL)"));
      }
    }));
  }
  for (auto& s : stops) s.get();
  std::shared_ptr<Network> network;  // let go of outside mu_: the last one ends it
  {
    std::lock_guard lock(mu_);
    network = std::move(nw->network);
    for (Worker& worker : nw->workers) {
      worker.box.reset();
      worker.applied_accounts.clear();
      if (worker.state != WorkerState::kFailed) worker.state = WorkerState::kOff;
      if (worker.startup_state == "RUNNING") worker.startup_state = "KILLED";
    }
  }
}

void WorkerManager::Wipe(const std::shared_ptr<NodeWorkers>& nw) {
  Node node;
  {
    std::lock_guard lock(mu_);
    node = nw->node;
    nodes_by_name_.erase(nw->name);
  }
  for (size_t w = 0; w < nw->workers.size(); ++w) {
    Status s = sandbox::Wipe(PathsOf(options_.dir, node, static_cast<int>(w)).dir);
    if (!s.ok()) spdlog::warn("wiping worker {} of {}: {}", w, nw->name, s.message());
  }
  std::error_code ec;
  std::filesystem::remove(options_.dir + "/" + node.uid, ec);
}

Status WorkerManager::Recover() {
  if (!options_.enabled) return Status::Ok();
  int64_t after = 0;
  for (;;) {
    Result<std::vector<Node>> page = nodes_.ListOwned(after, 500);
    if (!page.ok()) return page.status();
    if (page->empty()) return Status::Ok();
    for (const Node& node : *page) {
      after = std::max(after, node.seq);
      if (!node.sandbox.enabled) continue;
      capacity_.Restore(node.uid, node.type.workers);  // held until it is deleted
      const bool run = node.state == NodeState::kReady || node.state == NodeState::kCreating ||
                       node.state == NodeState::kStarting;
      if (run && !node.UnderMaintenance()) OnNodeStateChanged(node, node.state);
    }
  }
}

void WorkerManager::Reset() {
  if (!options_.enabled) return;
  std::vector<std::shared_ptr<NodeWorkers>> all;
  {
    std::lock_guard lock(mu_);
    for (auto& [name, nw] : nodes_by_name_) {
      nw->want_running = false;
      nw->booting = false;
      all.push_back(nw);
    }
  }
  for (const auto& nw : all) {
    std::promise<void> done;
    Post(nw, [&] {
      StopWorkers(nw, milliseconds(0), "the emulator was reset");
      Wipe(nw);
      done.set_value();
    });
    done.get_future().wait();
  }
  capacity_.Clear();
}

void WorkerManager::Stop() {
  {
    std::lock_guard lock(mu_);
    if (stopped_) return;
    stopped_ = true;
  }
  if (project_listener_ != 0) projects_.RemoveListener(project_listener_);
  sync_stop_ = true;
  sync_cv_.notify_all();
  if (sync_thread_.joinable()) sync_thread_.join();
  {
    std::lock_guard lock(pool_mu_);
    pool_stopping_ = true;
    ready_queues_.clear();
  }
  pool_cv_.notify_all();
  for (std::thread& t : pool_) t.join();
  pool_.clear();
  StopSshThreads();  // before the Reactor goes: they register sshd's exits with it
  std::vector<std::shared_ptr<NodeWorkers>> all;
  {
    std::lock_guard lock(mu_);
    for (auto& [name, nw] : nodes_by_name_) all.push_back(nw);
  }
  for (const auto& nw : all) StopWorkers(nw, milliseconds(0), "tpuemud stopped");
  reactor_.reset();
}

}  // namespace tpuemu::service
