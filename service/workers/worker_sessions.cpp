// WorkerManager, the processes it starts inside running workers: the startup script at each
// boot (its output kept per boot) and sshd for each SSH connection (its log read for failed
// logins).
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

}  // namespace tpuemu::service
