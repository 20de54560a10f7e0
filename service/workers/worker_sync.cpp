// WorkerManager, what it keeps in step while workers run: their users with the node's and the
// project's ssh-keys, applied on change — a node's boot, its metadata changed (a transition of it
// completed here, or another replica changed it), its project's commonInstanceMetadata changed, or
// the earliest google-ssh expiry of its keys came (a timer) — and workers whose init died behind
// its back (checked every second).
#include <algorithm>
#include <chrono>
#include <mutex>

#include "service/common/clock.h"
#include "service/workers/account_agent.h"
#include "service/workers/ssh_keys.h"
#include "service/workers/worker_manager.h"

namespace tpuemu::service {

using nlohmann::json;
using std::chrono::milliseconds;

namespace {

constexpr int64_t kDeadInitCheckMs = 1000;

}  // namespace

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
  std::string console;
  {
    std::lock_guard lock(mu_);
    for (const auto& [expiry, line] : nw->console_keys) console += line + "\n";
  }
  ParseSshKeys(console, now, accounts);
  auto [command, input] = AccountAgentCommand(accounts.keys);
  std::string rejected;
  for (const std::string& r : accounts.rejected) rejected += r + "\n";
  std::vector<std::pair<int, std::shared_ptr<sandbox::WorkerBox>>> todo;
  int first_running = -1;
  bool report = false;
  bool rearm = false;
  {
    std::lock_guard lock(mu_);
    for (Worker& worker : nw->workers) {
      if (worker.state != WorkerState::kRunning || !worker.box) continue;
      if (first_running < 0) first_running = worker.index;
      if (!force && worker.applied_accounts == input) continue;
      todo.emplace_back(worker.index, worker.box);
    }
    // Refused lines are said once per change of them (and again at each boot).
    if (first_running >= 0 && (force || nw->reported_rejections != rejected)) {
      report = true;
      nw->reported_rejections = rejected;
    }
    rearm = accounts.next_expiry_unix_ms != 0 && accounts.next_expiry_unix_ms != nw->keys_expire_ms;
    nw->keys_expire_ms = accounts.next_expiry_unix_ms;
  }
  if (rearm) {
    std::lock_guard lock(sync_mu_);
    sync_rearm_ = true;
    sync_cv_.notify_all();
  }
  if (report) {
    for (const std::string& r : accounts.rejected)
      Event(node, first_running, "SSH_KEY_REJECTED", r);
  }
  for (auto& [w, box] : todo) {
    Result<std::pair<int, std::string>> ran = box->Run(command, input, milliseconds(30000));
    if (ran.ok()) {
      // Users only the worker can refuse (existing system accounts), as the agent reported them.
      for (const AgentRejection& r : AccountAgentRejections(ran->second)) {
        Event(node, w, "SSH_KEY_REJECTED", "ssh-keys of user '" + r.user + "': " + r.why);
      }
    }
    if (!ran.ok() || ran->first != 0) {
      std::string why = ran.ok() ? "exit " + std::to_string(ran->first) + ": " + ran->second
                                 : ran.status().message();
      Event(node, w, "ACCOUNTS_FAILED", "applying ssh-keys failed: " + why);
      continue;
    }
    std::lock_guard lock(mu_);
    nw->workers[w].applied_accounts = input;
  }
  return Status::Ok();
}

void WorkerManager::SyncAccountsSoon(const std::string& node_name) {
  std::shared_ptr<NodeWorkers> nw;
  {
    std::lock_guard lock(mu_);
    auto it = nodes_by_name_.find(node_name);
    if (it == nodes_by_name_.end() || stopped_ || !it->second->want_running) return;
    nw = it->second;
    // One queued at a time is enough: it reads the node when it runs. (The ready gate calls this
    // every 100 ms while a node boots.)
    if (nw->keys_sync_queued) return;
    nw->keys_sync_queued = true;
  }
  // Behind a boot in the node's queue, if one is queued; SyncAccounts skips workers whose input
  // did not change.
  Post(nw, [this, nw] {
    NodeKey key;
    {
      std::lock_guard lock(mu_);
      nw->keys_sync_queued = false;
      if (!nw->want_running) return;
      key = nw->node.key;
    }
    Result<Node> node = nodes_.Get(key);
    if (!node.ok()) return;
    {
      std::lock_guard lock(mu_);
      nw->node = *node;
    }
    (void)SyncAccounts(nw, *node, /*force=*/false);
  });
}

void WorkerManager::OnProjectMetadataChanged(const std::string& project) {
  std::vector<std::string> names;
  {
    std::lock_guard lock(mu_);
    for (const auto& [name, nw] : nodes_by_name_) {
      if (nw->want_running && (project.empty() || nw->node.key.project == project)) {
        names.push_back(name);
      }
    }
  }
  for (const std::string& name : names) SyncAccountsSoon(name);
}

void WorkerManager::SyncLoop() {
  int64_t next_check_ms = NowUnixMs() + kDeadInitCheckMs;
  while (!sync_stop_) {
    int64_t wake_ms = next_check_ms;
    {
      std::lock_guard lock(mu_);
      for (const auto& [name, nw] : nodes_by_name_) {
        if (nw->keys_expire_ms != 0) wake_ms = std::min(wake_ms, nw->keys_expire_ms);
      }
    }
    {
      std::unique_lock lock(sync_mu_);
      const int64_t wait_ms = std::max<int64_t>(0, wake_ms - NowUnixMs());
      sync_cv_.wait_for(lock, milliseconds(wait_ms),
                        [&] { return sync_stop_.load() || sync_rearm_; });
      sync_rearm_ = false;
    }
    if (sync_stop_) return;
    const int64_t now = NowUnixMs();
    // A key expired: its node's users are computed again (without it).
    std::vector<std::string> expired;
    {
      std::lock_guard lock(mu_);
      for (auto& [name, nw] : nodes_by_name_) {
        if (nw->keys_expire_ms == 0 || nw->keys_expire_ms > now) continue;
        nw->keys_expire_ms = 0;
        expired.push_back(name);
      }
    }
    for (const std::string& name : expired) SyncAccountsSoon(name);
    if (now < next_check_ms) continue;
    next_check_ms = now + kDeadInitCheckMs;
    // A worker whose init died behind our back (killed from outside): say so once.
    std::vector<std::pair<Node, int>> died;
    {
      std::lock_guard lock(mu_);
      for (auto& [name, nw] : nodes_by_name_) {
        if (!nw->want_running || nw->booting) continue;
        for (Worker& worker : nw->workers) {
          if (worker.state == WorkerState::kRunning && worker.box && !worker.box->Alive()) {
            worker.state = WorkerState::kFailed;
            worker.error = "the worker's init exited unexpectedly";
            died.emplace_back(nw->node, worker.index);
          }
        }
      }
    }
    for (const auto& [node, w] : died)
      Event(node, w, "FAILED", "the worker's init exited unexpectedly");
  }
}

}  // namespace tpuemu::service
