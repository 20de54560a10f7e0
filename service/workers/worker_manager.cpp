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
#include "service/workers/ssh_keys.h"
#include "service/workers/ssh_probe.h"
#include "service/workers/worker_files.h"

namespace tpuemu::service {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;

std::string StateName(int state) {
  switch (state) {
    case 1:
      return "BOOTING";
    case 2:
      return "RUNNING";
    case 3:
      return "FAILED";
    default:
      return "STOPPED";
  }
}

// What the sshd of one connection logged that means a login failed.
bool LoginFailure(const std::string& line) {
  for (const char* mark :
       {"Failed publickey", "Invalid user", "authenticating user", "not allowed because",
        "Failed password", "no matching host key", "Unable to negotiate"}) {
    if (line.find(mark) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

WorkerManager::WorkerManager(NodeManager& nodes, ProjectMetadata& projects, WorkerOptions options,
                             WorkerHooks hooks)
    : nodes_(nodes), projects_(projects), options_(std::move(options)), hooks_(std::move(hooks)) {
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

Node::Sandbox WorkerManager::Decide(const Node& node) {
  Node::Sandbox s;
  if (options_.disabled_reason.empty() && !options_.enabled) return s;  // never considered
  s.decided = true;
  s.ssh_port = options_.ssh_port;
  s.network = options_.network;
  if (!options_.enabled) {
    s.reason = options_.disabled_reason;
    return s;
  }
  if (node.type.workers > std::min(options_.max_workers_per_node, kMaxSandboxedWorkersPerNode)) {
    s.reason = "worker sandboxes off for this node: " + std::to_string(node.type.workers) +
               " workers, over --worker-max-per-node " +
               std::to_string(options_.max_workers_per_node);
    return s;
  }
  // The workers of the nodes this manager drives now (a create that fails after this call
  // holds nothing; creates racing each other may pass the cap by their own workers).
  int sandboxed = 0;
  {
    std::lock_guard lock(mu_);
    for (const auto& [name, nw] : nodes_by_name_) sandboxed += static_cast<int>(nw->workers.size());
  }
  if (sandboxed + node.type.workers > options_.max_workers) {
    s.reason = "worker sandboxes off for this node: " + std::to_string(sandboxed) +
               " sandboxed workers exist already, and --worker-max " +
               std::to_string(options_.max_workers) + " allows no " +
               std::to_string(node.type.workers) + " more";
    return s;
  }
  s.enabled = true;
  return s;
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
      worker.ip = WorkerIpAddress(node, w);
      nw->workers.push_back(std::move(worker));
    }
  }
  nw->node = node;
  return nw;
}

bool WorkerManager::Ready(const std::string& node_name) {
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

GuestContext WorkerManager::ContextFor(const Node& node) const {
  GuestContext context;
  {
    std::lock_guard lock(mu_);
    context.api_endpoint = api_endpoint_;
  }
  if (node.multislice_node && !node.queued_resource.empty()) {
    Result<std::vector<Node>> slices = nodes_.ListOfQueuedResource(node.queued_resource);
    if (slices.ok() && !slices->empty()) {
      SliceInfo slice;
      slice.num_slices = static_cast<int>(slices->size());
      for (size_t i = 0; i < slices->size(); ++i) {
        if ((*slices)[i].key.Name() == node.key.Name()) slice.slice_id = static_cast<int>(i);
      }
      slice.coordinator_address = WorkerIpAddress(slices->front(), 0) + ":8080";
      context.slice = slice;
    }
  }
  return context;
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
  const std::string ip = WorkerIpAddress(node, w);
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
  if (hooks_.listen_metadata) {
    Status s = hooks_.listen_metadata(ip, name, w);
    if (!s.ok()) {
      failed("the metadata server cannot listen: " + s.message());
    } else {
      std::lock_guard lock(mu_);
      nw->workers[w].metadata_listening = true;
    }
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

void WorkerManager::StartStartupScript(const std::shared_ptr<NodeWorkers>& nw, const Node& node,
                                       int w) {
  std::shared_ptr<sandbox::WorkerBox> box;
  {
    std::lock_guard lock(mu_);
    Worker& worker = nw->workers[w];
    if (worker.state != WorkerState::kRunning) return;
    box = worker.box;
    worker.startup_state = "NONE";
    worker.startup_exit_code = 0;
    worker.startup_log_bytes = 0;
  }
  const WorkerPaths paths = PathsOf(options_.dir, node, w);
  std::string script;
  if (const json md = node.fields.value("metadata", json::object());
      md.is_object() && md.contains("startup-script") && md["startup-script"].is_string()) {
    script = md["startup-script"].get<std::string>();
  }
  // A fresh log each boot (the last boot's output is what the API serves).
  int log = open(paths.startup_log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log >= 0) close(log);
  if (script.empty()) return;
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) return;
  std::vector<std::string> env = {"HOME=/root", "USER=root", "LOGNAME=root"};
  for (const auto& [key, value] : WorkerEnvironment(node, w, ContextFor(node))) {
    env.push_back(key + "=" + value);
  }
  Result<pid_t> pid = box->Spawn(StartupScriptCommand(script), env, {-1, pipe_fds[1], pipe_fds[1]});
  close(pipe_fds[1]);
  if (!pid.ok()) {
    close(pipe_fds[0]);
    Event(node, w, "STARTUP_SCRIPT_FAILED",
          "cannot run the startup script: " + pid.status().message());
    return;
  }
  {
    std::lock_guard lock(mu_);
    nw->workers[w].startup_state = "RUNNING";
  }
  Event(node, w, "STARTUP_SCRIPT_RUNNING", "startup-script started");
  const std::string log_path = paths.startup_log;
  const int64_t cap = options_.startup_log_max_bytes;
  auto written = std::make_shared<int64_t>(0);
  reactor_->WatchOutput(pipe_fds[0], [this, nw, w, log_path, cap, written](std::string_view data) {
    if (*written >= cap) return;
    std::ofstream out(log_path, std::ios::app | std::ios::binary);
    int64_t room = cap - *written;
    out.write(data.data(), std::min<int64_t>(room, static_cast<int64_t>(data.size())));
    *written += std::min<int64_t>(room, static_cast<int64_t>(data.size()));
    if (*written >= cap) out << "\n[tpuemu: output truncated at " << cap << " bytes]\n";
    std::lock_guard lock(mu_);
    nw->workers[w].startup_log_bytes = *written;
  });
  reactor_->WatchExit(*pid, [this, nw, node, w](int wait_status) {
    int code = WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : 128 + WTERMSIG(wait_status);
    {
      std::lock_guard lock(mu_);
      nw->workers[w].startup_state = "EXITED";
      nw->workers[w].startup_exit_code = code;
    }
    Event(node, w, "STARTUP_SCRIPT_EXITED", "startup-script exited with " + std::to_string(code));
  });
}

void WorkerManager::OnSshConnection(const std::string& node_name, int w, int fd) {
  std::shared_ptr<sandbox::WorkerBox> box;
  {
    std::lock_guard lock(mu_);
    auto it = nodes_by_name_.find(node_name);
    if (it != nodes_by_name_.end() && w < static_cast<int>(it->second->workers.size())) {
      box = it->second->workers[w].box;
    }
  }
  if (!box || !box->Alive()) {
    close(fd);
    return;
  }
  int err[2];
  if (pipe2(err, O_CLOEXEC) != 0) {
    close(fd);
    return;
  }
  Result<pid_t> pid = box->Spawn(SshdCommand(options_.support), {}, {fd, fd, err[1]});
  close(fd);
  close(err[1]);
  if (!pid.ok()) {
    close(err[0]);
    spdlog::warn("worker {} of {}: cannot start sshd: {}", w, node_name, pid.status().message());
    return;
  }
  reactor_->WatchExit(*pid, [](int) {});
  auto pending = std::make_shared<std::string>();
  reactor_->WatchOutput(err[0], [this, node_name, w, pending](std::string_view data) {
    pending->append(data);
    for (size_t nl; (nl = pending->find('\n')) != std::string::npos;) {
      std::string line = pending->substr(0, nl);
      pending->erase(0, nl + 1);
      OnSshdLog(node_name, w, line);
    }
  });
}

void WorkerManager::OnSshdLog(const std::string& node_name, int w, const std::string& line) {
  if (!LoginFailure(line)) return;
  Node node;
  {
    std::lock_guard lock(mu_);
    auto it = nodes_by_name_.find(node_name);
    if (it == nodes_by_name_.end()) return;
    node = it->second->node;
  }
  Event(node, w, "LOGIN_FAILED", "sshd: " + line);
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
  std::vector<std::string> metadata_ips;
  {
    std::lock_guard lock(mu_);
    for (Worker& worker : nw->workers) {
      if (worker.metadata_listening) metadata_ips.push_back(worker.ip);
      worker.metadata_listening = false;
      worker.box.reset();
      worker.applied_accounts.clear();
      if (worker.state != WorkerState::kFailed) worker.state = WorkerState::kOff;
      if (worker.startup_state == "RUNNING") worker.startup_state = "KILLED";
    }
  }
  if (hooks_.unlisten_metadata) {
    for (const std::string& ip : metadata_ips) hooks_.unlisten_metadata(ip);
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

Status WorkerManager::SyncAccounts(const std::shared_ptr<NodeWorkers>& nw, const Node& node,
                                   bool force) {
  SshAccounts accounts;
  const int64_t now = NowUnixMs();
  const json md = node.fields.value("metadata", json::object());
  auto value = [](const json& obj, const std::string& key) -> std::string {
    if (!obj.is_object() || !obj.contains(key) || !obj[key].is_string()) return "";
    return obj[key].get<std::string>();
  };
  std::string block = value(md, "block-project-ssh-keys");
  std::transform(block.begin(), block.end(), block.begin(), ::tolower);
  if (block != "true") {
    Result<ProjectInfo> project = projects_.Info(node.key.project);
    if (project.ok()) {
      for (const json& item : project->items) {
        if (item.value("key", "") == "ssh-keys") {
          ParseSshKeys(item.value("value", ""), now, accounts);
        }
      }
    }
  }
  ParseSshKeys(value(md, "ssh-keys"), now, accounts);
  auto [command, input] = AccountAgentCommand(accounts.keys);
  std::vector<std::pair<int, std::shared_ptr<sandbox::WorkerBox>>> todo;
  {
    std::lock_guard lock(mu_);
    for (Worker& worker : nw->workers) {
      if (worker.state != WorkerState::kRunning || !worker.box) continue;
      if (!force && worker.applied_accounts == input) continue;
      todo.emplace_back(worker.index, worker.box);
    }
  }
  if (todo.empty()) return Status::Ok();
  bool reported = false;
  for (auto& [w, box] : todo) {
    Result<std::pair<int, std::string>> ran = box->Run(command, input, milliseconds(30000));
    if (!ran.ok() || ran->first != 0) {
      std::string why = ran.ok() ? "exit " + std::to_string(ran->first) + ": " + ran->second
                                 : ran.status().message();
      Event(node, w, "ACCOUNTS_FAILED", "applying ssh-keys failed: " + why);
      continue;
    }
    if (!reported) {
      for (const std::string& rejected : accounts.rejected) {
        Event(node, w, "SSH_KEY_REJECTED", rejected);
      }
      reported = true;
    }
    std::lock_guard lock(mu_);
    nw->workers[w].applied_accounts = input;
  }
  return Status::Ok();
}

void WorkerManager::SyncLoop() {
  while (!sync_stop_) {
    {
      std::unique_lock lock(sync_mu_);
      sync_cv_.wait_for(lock, milliseconds(250), [&] { return sync_stop_.load(); });
    }
    if (sync_stop_) return;
    std::vector<std::shared_ptr<NodeWorkers>> running;
    {
      std::lock_guard lock(mu_);
      for (auto& [name, nw] : nodes_by_name_) {
        if (nw->want_running && !nw->booting) running.push_back(nw);
      }
    }
    for (const auto& nw : running) {
      Result<Node> node = nodes_.Get(nw->node.key);
      if (!node.ok()) continue;
      // A worker whose init died behind our back (killed from outside): say so once.
      std::vector<int> died;
      {
        std::lock_guard lock(mu_);
        nw->node = *node;
        for (Worker& worker : nw->workers) {
          if (worker.state == WorkerState::kRunning && worker.box && !worker.box->Alive()) {
            worker.state = WorkerState::kFailed;
            worker.error = "the worker's init exited unexpectedly";
            died.push_back(worker.index);
          }
        }
      }
      for (int w : died) Event(*node, w, "FAILED", "the worker's init exited unexpectedly");
      Post(nw, [this, nw, n = *node] { (void)SyncAccounts(nw, n, false); });
    }
  }
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
}

void WorkerManager::Stop() {
  {
    std::lock_guard lock(mu_);
    if (stopped_) return;
    stopped_ = true;
  }
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
  std::vector<std::shared_ptr<NodeWorkers>> all;
  {
    std::lock_guard lock(mu_);
    for (auto& [name, nw] : nodes_by_name_) all.push_back(nw);
  }
  for (const auto& nw : all) StopWorkers(nw, milliseconds(0), "tpuemud stopped");
  reactor_.reset();
}

json WorkerManager::Describe(const Node& node) {
  json out = json::array();
  std::shared_ptr<NodeWorkers> nw;
  {
    std::lock_guard lock(mu_);
    auto it = nodes_by_name_.find(node.key.Name());
    if (it != nodes_by_name_.end()) nw = it->second;
  }
  for (int w = 0; w < node.type.workers; ++w) {
    json worker = {{"workerId", w},
                   {"hostname", WorkerHostname(node, w)},
                   {"ipAddress", WorkerIpAddress(node, w)}};
    if (!node.sandbox.enabled) {
      worker["state"] = "NOT_SANDBOXED";
      worker["error"] = node.sandbox.decided ? node.sandbox.reason
                                             : "this node was made without worker sandboxes";
      out.push_back(worker);
      continue;
    }
    worker["sshPort"] = node.sandbox.ssh_port;
    std::string port =
        node.sandbox.ssh_port == 22 ? "" : " -p " + std::to_string(node.sandbox.ssh_port);
    worker["sshCommand"] =
        "ssh -i ~/.ssh/google_compute_engine" + port + " USER@" + WorkerIpAddress(node, w);
    std::shared_ptr<sandbox::WorkerBox> box;
    if (nw) {
      std::lock_guard lock(mu_);
      const Worker& rt = nw->workers[w];
      worker["state"] = StateName(static_cast<int>(rt.state));
      if (!rt.error.empty()) worker["error"] = rt.error;
      json startup = {{"state", rt.startup_state}, {"outputBytes", rt.startup_log_bytes}};
      if (rt.startup_state == "EXITED") startup["exitCode"] = rt.startup_exit_code;
      worker["startupScript"] = startup;
      box = rt.box;
    } else {
      worker["state"] = "STOPPED";
    }
    if (box && box->Alive()) {
      worker["memoryBytes"] = box->MemoryBytes();
      worker["processes"] = box->ProcessCount();
    }
    out.push_back(worker);
  }
  return {{"node", node.key.Name()}, {"workers", out}};
}

Result<std::string> WorkerManager::StartupScriptOutput(const Node& node, int worker,
                                                       int64_t offset) const {
  if (worker < 0 || worker >= node.type.workers) {
    return Status::InvalidArgument("Invalid value for field 'worker': " + std::to_string(worker) +
                                   "; node '" + node.key.Name() + "' has workers 0.." +
                                   std::to_string(node.type.workers - 1));
  }
  if (!node.sandbox.enabled) return std::string();
  std::ifstream in(PathsOf(options_.dir, node, worker).startup_log, std::ios::binary);
  if (!in) return std::string();
  in.seekg(0, std::ios::end);
  const int64_t size = in.tellg();
  if (offset >= size) return std::string();
  in.seekg(std::max<int64_t>(0, offset));
  std::string out(static_cast<size_t>(size - std::max<int64_t>(0, offset)), '\0');
  in.read(out.data(), static_cast<std::streamsize>(out.size()));
  return out;
}

Result<std::string> WorkerManager::HostKey(const Node& node, int worker) const {
  if (!node.sandbox.enabled) return Status::NotFound("node has no worker sandboxes");
  return HostPublicKey(PathsOf(options_.dir, node, worker));
}

Result<json> WorkerManager::GuestTree(const std::string& node_name, int worker) const {
  NodeKey key;
  {
    std::lock_guard lock(mu_);
    auto it = nodes_by_name_.find(node_name);
    if (it == nodes_by_name_.end()) return Status::NotFound("no such worker");
    key = it->second->node.key;
  }
  Result<Node> node = nodes_.Get(key);
  if (!node.ok()) return node.status();
  Result<ProjectInfo> project = projects_.Info(key.project);
  if (!project.ok()) return project.status();
  return GuestMetadataTree(*node, worker, *project, ContextFor(*node));
}

int WorkerManager::RunningWorkers() const {
  std::lock_guard lock(mu_);
  int n = 0;
  for (const auto& [name, nw] : nodes_by_name_) {
    for (const Worker& w : nw->workers) n += w.state == WorkerState::kRunning;
  }
  return n;
}

}  // namespace tpuemu::service
