// WorkerManager, the processes it starts inside running workers: the startup script at each
// boot (its output kept per boot) and sshd for each SSH connection (its log read for failed
// logins and for the login that ends a connection's grace), within each worker's SSH budgets.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>

#include <spdlog/spdlog.h>

#include "service/workers/worker_files.h"
#include "service/workers/worker_manager.h"

namespace tpuemu::service {
namespace {

using nlohmann::json;

// What the sshd of one connection logged that means a login failed.
bool LoginFailure(const std::string& line) {
  for (const char* mark :
       {"Failed publickey", "Invalid user", "authenticating user", "not allowed because",
        "Failed password", "no matching host key", "Unable to negotiate"}) {
    if (line.find(mark) != std::string::npos) return true;
  }
  return false;
}

// sshd's line for a login that succeeded: "Accepted publickey for USER from IP port N ssh2: ...".
// Only at the start of a line: names a client chose (an invalid user's) are logged within lines.
bool LoginAccepted(const std::string& line) {
  return line.starts_with("Accepted ") && line.find(" for ") != std::string::npos;
}

// Where one SSH connection stands. Touched on the Reactor thread only (sshd's exit and log).
struct SshLogin {
  bool logged_in = false;
  bool ended = false;
  std::string pending;  // sshd's log since the last full line
};

}  // namespace

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
  // The Reactor thread: counts the connection against its worker's budgets and queues it, or
  // drops it (sshd's MaxStartups: closed before any banner). Never starts a process.
  std::shared_ptr<NodeWorkers> nw;
  int unauthenticated = 0;
  int connections = 0;
  bool first_drop = false;
  {
    std::lock_guard lock(mu_);
    auto it = nodes_by_name_.find(node_name);
    if (it != nodes_by_name_.end() && w < static_cast<int>(it->second->workers.size()) &&
        it->second->workers[w].box) {
      Worker& worker = it->second->workers[w];
      if (worker.ssh_unauthenticated < options_.ssh_max_startups &&
          worker.ssh_connections < options_.ssh_max_connections) {
        ++worker.ssh_unauthenticated;
        ++worker.ssh_connections;
        worker.ssh_dropping = false;
        nw = it->second;
      } else {
        first_drop = !worker.ssh_dropping;
        worker.ssh_dropping = true;
        unauthenticated = worker.ssh_unauthenticated;
        connections = worker.ssh_connections;
      }
    }
  }
  if (!nw) {
    close(fd);
    if (first_drop) {
      spdlog::warn(
          "worker {} of {}: dropping SSH connections: {} not logged in yet (at most {}), {} in all "
          "(at most {})",
          w, node_name, unauthenticated, options_.ssh_max_startups, connections,
          options_.ssh_max_connections);
    }
    return;
  }
  {
    std::lock_guard lock(ssh_mu_);
    if (!ssh_stopping_) {
      const SshKey key(nw.get(), w);
      std::deque<SshStart>& waiting = ssh_waiting_[key];
      if (waiting.empty()) ssh_turns_.push_back(key);
      waiting.push_back({nw, w, fd});
      ssh_cv_.notify_one();
      return;
    }
  }
  close(fd);
  CountSsh(*nw, w, -1, -1);
}

void WorkerManager::StartSshThreads() {
  for (int i = 0; i < std::max(1, options_.ssh_threads); ++i) {
    ssh_pool_.emplace_back([this] { SshLoop(); });
  }
}

void WorkerManager::StopSshThreads() {
  {
    std::lock_guard lock(ssh_mu_);
    ssh_stopping_ = true;
  }
  ssh_cv_.notify_all();
  for (std::thread& t : ssh_pool_) t.join();
  ssh_pool_.clear();
  std::lock_guard lock(ssh_mu_);
  for (auto& [key, waiting] : ssh_waiting_) {
    for (const SshStart& start : waiting) close(start.fd);
  }
  ssh_waiting_.clear();
  ssh_turns_.clear();
}

void WorkerManager::SshLoop() {
  for (;;) {
    SshStart start;
    {
      std::unique_lock lock(ssh_mu_);
      ssh_cv_.wait(lock, [&] { return ssh_stopping_ || !ssh_turns_.empty(); });
      if (ssh_stopping_) return;
      const SshKey key = ssh_turns_.front();
      ssh_turns_.pop_front();
      auto it = ssh_waiting_.find(key);
      start = std::move(it->second.front());
      it->second.pop_front();
      if (it->second.empty()) {
        ssh_waiting_.erase(it);
      } else {
        ssh_turns_.push_back(key);  // its next connection after every other worker's
      }
    }
    StartSshd(std::move(start));
  }
}

void WorkerManager::CountSsh(NodeWorkers& nw, int w, int unauthenticated, int connections) {
  std::lock_guard lock(mu_);
  Worker& worker = nw.workers[w];
  worker.ssh_unauthenticated += unauthenticated;
  worker.ssh_connections += connections;
}

void WorkerManager::StartSshd(SshStart start) {
  std::shared_ptr<NodeWorkers> nw = std::move(start.nw);
  const int w = start.w;
  std::shared_ptr<sandbox::WorkerBox> box;
  {
    std::lock_guard lock(mu_);
    box = nw->workers[w].box;
  }
  int err[2];
  if (!box || !box->Alive() || pipe2(err, O_CLOEXEC) != 0) {
    close(start.fd);
    CountSsh(*nw, w, -1, -1);
    return;
  }
  Result<pid_t> pid = box->Spawn(SshdCommand(options_.support), {}, {start.fd, start.fd, err[1]});
  close(start.fd);
  close(err[1]);
  if (!pid.ok()) {
    close(err[0]);
    CountSsh(*nw, w, -1, -1);
    spdlog::warn("worker {} of {}: cannot start sshd: {}", w, nw->name, pid.status().message());
    return;
  }
  // The connection stops counting as not logged in when its sshd logs the login, and stops
  // counting at all when sshd exits (the login grace ends a silent one).
  auto login = std::make_shared<SshLogin>();
  reactor_->WatchExit(*pid, [this, nw, w, login](int) {
    login->ended = true;
    CountSsh(*nw, w, login->logged_in ? 0 : -1, -1);
  });
  reactor_->WatchOutput(err[0], [this, nw, w, login](std::string_view data) {
    login->pending.append(data);
    for (size_t nl; (nl = login->pending.find('\n')) != std::string::npos;) {
      std::string line = login->pending.substr(0, nl);
      login->pending.erase(0, nl + 1);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (!login->logged_in && !login->ended && LoginAccepted(line)) {
        login->logged_in = true;
        CountSsh(*nw, w, -1, 0);
      }
      OnSshdLog(nw->name, w, line);
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

}  // namespace tpuemu::service
