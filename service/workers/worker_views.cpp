// WorkerManager, what it tells about workers: the REST view of a node's workers, a startup
// script's output, a worker's host key, the metadata tree a worker sees and its context.
#include <algorithm>
#include <fstream>

#include "service/workers/worker_files.h"
#include "service/workers/worker_manager.h"

namespace tpuemu::service {
namespace {

using nlohmann::json;

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

}  // namespace

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
    worker["externalIp"] = WorkerExternalAddress(node, w);
    std::string port =
        node.sandbox.ssh_port == 22 ? "" : " -p " + std::to_string(node.sandbox.ssh_port);
    worker["sshCommand"] =
        "ssh -i ~/.ssh/google_compute_engine" + port + " USER@" + WorkerExternalAddress(node, w);
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

GuestContext WorkerManager::ContextFor(const Node& node) const {
  GuestContext context;
  {
    std::lock_guard lock(mu_);
    // A sandboxed worker reaches the API only on its slice's network (api/worker_api.h).
    context.api_endpoint = node.sandbox.enabled ? kWorkerApiEndpoint : api_endpoint_;
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

}  // namespace tpuemu::service
