// NodeCache: the read side's cache of nodes as the API serves them — the parsed Node and its
// rendered v2 JSON — so GET and list do not read SQLite, parse the stored JSON and render it again
// on every request (those were most of a GET's CPU time).
//
// Consistency: the writer brackets every batch of writes with BeginWrite() (before its transaction)
// and EndWrite() (after it ended, before the writes are acknowledged), and calls Touch(name) before
// it writes a node's row. A touched node leaves the cache and takes no insert until the batch ends,
// so its reads go to the store and agree with what other readers see there (an Operation done and
// its node READY, say); the nodes the batch does not write stay cached, unchanged, which is what
// keeps GET fast in a large project while writes flow (docs/architecture.md, "Store at scale"). A
// reader fills the cache only if no BeginWrite/EndWrite happened since it began reading the store
// (the generation check), so a value read before a commit can never be inserted after it.
// With several replicas on one store, another replica's commit reaches no BeginWrite here: the
// manager then checks each view against the row it reads (NodeView::row), and the change feed
// drops views early (Drop).
// Thread-safe: every member is guarded by mu_; views are immutable and shared.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "db/node_repository.h"
#include "service/nodes/node.h"

namespace tpuemu::service {

struct NodeView {
  Node node;
  std::string json;  // RenderNode(node), compact, invalid UTF-8 replaced
  db::NodeRow row;   // the stored row it was made from (a shared store's reads compare it)
};

class NodeCache {
 public:
  // Entries kept at most; past it the cache starts over (a simple bound for huge fleets).
  static constexpr std::size_t kMaxEntries = 100000;

  std::shared_ptr<const NodeView> Find(const std::string& name) const;
  // The generation to pass to Insert: take it BEFORE reading the store.
  uint64_t Generation() const;
  // Builds the view and caches it unless a write began or ended since `generation`.
  std::shared_ptr<const NodeView> Insert(Node node, uint64_t generation, db::NodeRow row = {});
  // A batch of writes begins / has ended (committed or not).
  void BeginWrite();
  void EndWrite();
  // The running batch is about to write node `name`: drops its view and refuses inserts of it
  // until EndWrite.
  void Touch(const std::string& name);
  // Drops node `name`'s view (another replica wrote it).
  void Drop(const std::string& name);
  // Drops every view (a wipe of the store).
  void Clear();

 private:
  mutable std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<const NodeView>> views_;  // guarded by mu_
  std::unordered_set<std::string> touched_;  // written by the running batch; guarded by mu_
  uint64_t generation_ = 0;                  // guarded by mu_
};

}  // namespace tpuemu::service
