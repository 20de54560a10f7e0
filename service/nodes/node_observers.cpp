// NodeManager, who hears of node state changes: the observers (jobs, queued resources, workers,
// observability), called in commit order on the node writes' thread.
#include "service/nodes/node_manager.h"

namespace tpuemu::service {

void NodeManager::SetStateObserver(StateObserver observer) {
  std::lock_guard lock(observer_mu_);
  observers_.clear();
  if (observer) observers_.push_back(std::move(observer));
}

void NodeManager::AddStateObserver(StateObserver observer) {
  std::lock_guard lock(observer_mu_);
  if (observer) observers_.push_back(std::move(observer));
}

void NodeManager::Notify(const Node& node, NodeState previous) {
  std::lock_guard lock(observer_mu_);
  for (const StateObserver& observer : observers_) observer(node, previous);
}

}  // namespace tpuemu::service
