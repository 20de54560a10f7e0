// WorkerManager, what it admits: whether a node's workers are sandboxes, and what they and the
// queued resources waiting for them hold of this host's capacity (host_capacity.h).
#include <algorithm>

#include "service/workers/host_capacity.h"
#include "service/workers/worker_manager.h"

namespace tpuemu::service {

Result<Node::Sandbox> WorkerManager::Decide(const Node& node) {
  Node::Sandbox s;
  if (options_.disabled_reason.empty() && !options_.enabled) return s;  // never considered
  s.decided = true;
  s.ssh_port = options_.ssh_port;
  s.network = options_.network;
  s.subnet = options_.subnet;
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
  // A queued resource's node takes what the queued resource reserved for it; any other create
  // reserves its own, all or nothing (a create that then fails gives it back: Abandon).
  const bool reserved =
      !node.queued_resource.empty() &&
      capacity_.Move(QueuedResourceHolder(node.queued_resource), node.uid, node.type.workers);
  if (!reserved) TPUEMU_RETURN_IF_ERROR(capacity_.Reserve(node.uid, node.type.workers));
  s.enabled = true;
  return s;
}

void WorkerManager::Abandon(const Node& node) { ReleaseNode(node); }

void WorkerManager::ReleaseNode(const Node& node) {
  if (capacity_.Release(node.uid) > 0 && on_capacity_freed_) on_capacity_freed_();
}

Status WorkerManager::ReserveForQueuedResource(const std::string& queued_resource,
                                               const std::vector<int>& node_workers) {
  if (!options_.enabled) return Status::Ok();
  int workers = 0;
  for (int w : node_workers) {
    if (w <= std::min(options_.max_workers_per_node, kMaxSandboxedWorkersPerNode)) workers += w;
  }
  return capacity_.Reserve(QueuedResourceHolder(queued_resource), workers);
}

void WorkerManager::ReleaseQueuedResource(const std::string& queued_resource) {
  if (capacity_.Release(QueuedResourceHolder(queued_resource)) > 0 && on_capacity_freed_) {
    on_capacity_freed_();
  }
}

}  // namespace tpuemu::service
