// NodeCache: the read side's cache of nodes as the API serves them — the parsed Node and its
// rendered v2 JSON — so GET and list do not read SQLite, parse the stored JSON and render it again
// on every request (those were most of a GET's CPU time).
//
// Consistency: the writer clears the cache after every committed batch (and after a wipe), before
// it acknowledges the writes, so a client that saw its write acknowledged never reads an older
// node. A reader fills the cache only if no clear happened since it began reading the store (the
// generation check), so a value read before a commit can never be inserted after that commit's
// clear. Thread-safe: every member is guarded by mu_; views are immutable and shared.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "service/node.h"

namespace tpuemu::service {

struct NodeView {
  Node node;
  std::string json;  // RenderNode(node), compact, invalid UTF-8 replaced
};

class NodeCache {
 public:
  // Entries kept at most; past it the cache starts over (a simple bound for huge fleets).
  static constexpr std::size_t kMaxEntries = 100000;

  std::shared_ptr<const NodeView> Find(const std::string& name) const;
  // The generation to pass to Insert: take it BEFORE reading the store.
  uint64_t Generation() const;
  // Builds the view and caches it unless the cache was cleared since `generation`.
  std::shared_ptr<const NodeView> Insert(Node node, uint64_t generation);
  void Clear();

 private:
  mutable std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<const NodeView>> views_;  // guarded by mu_
  uint64_t generation_ = 0;                                                 // guarded by mu_
};

}  // namespace tpuemu::service
