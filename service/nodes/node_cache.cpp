#include "service/nodes/node_cache.h"

#include <utility>

namespace tpuemu::service {

std::shared_ptr<const NodeView> NodeCache::Find(const std::string& name) const {
  std::lock_guard lock(mu_);
  auto it = views_.find(name);
  return it == views_.end() ? nullptr : it->second;
}

uint64_t NodeCache::Generation() const {
  std::lock_guard lock(mu_);
  return generation_;
}

std::shared_ptr<const NodeView> NodeCache::Insert(Node node, uint64_t generation, db::NodeRow row) {
  auto view = std::make_shared<NodeView>();
  view->row = std::move(row);
  // Rendered outside the lock: it is the expensive part.
  view->json = RenderNode(node).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  view->node = std::move(node);
  std::lock_guard lock(mu_);
  if (generation == generation_ && !touched_.contains(view->node.key.Name())) {
    if (views_.size() >= kMaxEntries) views_.clear();
    views_[view->node.key.Name()] = view;
  }
  return view;
}

void NodeCache::BeginWrite() {
  std::lock_guard lock(mu_);
  ++generation_;
}

void NodeCache::Touch(const std::string& name) {
  std::lock_guard lock(mu_);
  views_.erase(name);
  touched_.insert(name);
}

void NodeCache::EndWrite() {
  std::lock_guard lock(mu_);
  for (const std::string& name : touched_) views_.erase(name);
  touched_.clear();
  ++generation_;
}

void NodeCache::Drop(const std::string& name) {
  std::lock_guard lock(mu_);
  views_.erase(name);
  ++generation_;
}

void NodeCache::Clear() {
  std::lock_guard lock(mu_);
  views_.clear();
  ++generation_;
}

}  // namespace tpuemu::service
