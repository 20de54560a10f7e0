// WorkerManager's part of the console's SSH-in-browser (worker_manager.h, AddConsoleKey): the
// key the console would add to the node's ssh-keys, kept beside the node's own keys and applied
// at once to the worker the person logs into.
#include <algorithm>
#include <chrono>
#include <future>
#include <memory>

#include "service/common/clock.h"
#include "service/workers/ssh_keys.h"
#include "service/workers/worker_files.h"
#include "service/workers/worker_manager.h"

namespace tpuemu::service {

Result<WorkerManager::ConsoleLogin> WorkerManager::AddConsoleKey(const std::string& node_name,
                                                                 int worker,
                                                                 const std::string& user,
                                                                 const std::string& public_key,
                                                                 int64_t expire_unix_ms) {
  if (!ValidUserName(user) || user == "root") {
    return Status::InvalidArgument("user name '" + user + "' cannot log in to a TPU VM");
  }
  // A google-ssh line, as the console writes it ("expireOn" in RFC 3339).
  const std::string expire_on = FormatRfc3339(WallTime(std::chrono::milliseconds(expire_unix_ms)));
  const std::string line = user + ":" + public_key + " google-ssh {\"userName\":\"" + user +
                           "\",\"expireOn\":\"" + expire_on + "\"}";
  std::shared_ptr<NodeWorkers> nw;
  Node node;
  {
    std::lock_guard lock(mu_);
    auto it = nodes_by_name_.find(node_name);
    if (it == nodes_by_name_.end() || !it->second->want_running || worker < 0 ||
        worker >= static_cast<int>(it->second->workers.size()) ||
        it->second->workers[worker].state != WorkerState::kRunning) {
      return Status::FailedPrecondition("worker " + std::to_string(worker) + " of " + node_name +
                                        " is not running");
    }
    nw = it->second;
    node = nw->node;
    const int64_t now = NowUnixMs();
    std::erase_if(nw->console_keys, [now](const auto& key) { return key.first <= now; });
    nw->console_keys.emplace_back(expire_unix_ms, line);
  }
  // Applied in the node's order (behind a boot or another sync), waited for here.
  auto applied = std::make_shared<std::promise<Status>>();
  std::future<Status> done = applied->get_future();
  Post(nw, [this, nw, node, applied] { applied->set_value(SyncAccounts(nw, node, false)); });
  if (done.wait_for(std::chrono::seconds(30)) != std::future_status::ready) {
    return Status::DeadlineExceeded("the worker's accounts were not updated within 30 s");
  }
  TPUEMU_RETURN_IF_ERROR(done.get());
  Result<std::string> host_key = HostKey(node, worker);
  if (!host_key.ok()) return host_key.status();
  return ConsoleLogin{WorkerExternalAddress(node, worker), options_.ssh_port, *host_key};
}

}  // namespace tpuemu::service
