// WorkerManager, what it keeps in step while workers run: their users with the node's and the
// project's ssh-keys (the account agent runs only when its input changed), and workers whose
// init died behind its back.
#include <algorithm>
#include <chrono>
#include <mutex>

#include "service/common/clock.h"
#include "service/workers/ssh_keys.h"
#include "service/workers/worker_files.h"
#include "service/workers/worker_manager.h"

namespace tpuemu::service {

using nlohmann::json;
using std::chrono::milliseconds;

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

}  // namespace tpuemu::service
