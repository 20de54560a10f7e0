// NodeCache: the read side's cache of nodes as the API serves them — the parsed Node and its
// rendered v2 JSON — so GET and list do not read SQLite, parse the stored JSON and render it again
// on every request (those were most of a GET's CPU time).
//
// Consistency: the writer brackets every batch of writes with BeginWrite() (before its transaction)
// and EndWrite() (after it ended, before the writes are acknowledged). In between, the cache is
// empty and takes no inserts, so every read goes to the store and agrees with what other readers
// see there (an Operation done and its node READY, say). A reader fills the cache only if no
// BeginWrite/EndWrite happened since it began reading the store (the generation check), so a value
// read before a commit can never be inserted after it.
// Thread-safe: every member is guarded by mu_; views are immutable and shared.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "service/nodes/node.h"

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
  // Builds the view and caches it unless a write began or ended since `generation`.
  std::shared_ptr<const NodeView> Insert(Node node, uint64_t generation);
  // Empties the cache and stops inserts until EndWrite (batches of writes, wipes).
  void BeginWrite();
  void EndWrite();

 private:
  mutable std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<const NodeView>> views_;  // guarded by mu_
  uint64_t generation_ = 0;                                                 // guarded by mu_
  bool writing_ = false;                                                    // guarded by mu_
};

}  // namespace tpuemu::service
