// The replicas half of NodeManager (see the header): which replica drives a node (nodes.owner,
// written with every node by Row), adopting the nodes no live replica owns (a restart is adoption
// of this replica's own), and reads that check a cached view against the stored row when other
// replicas write the same store. Split from node_manager.cpp, which owns the verbs.
#include "service/nodes/node_manager.h"
#include "service/nodes/node_rows.h"

namespace tpuemu::service {

Status NodeManager::Recover() {
  TPUEMU_RETURN_IF_ERROR(writes_.quota().Reseed());
  Result<std::vector<Node>> adopted = Adopt(/*include_own=*/true);
  if (!adopted.ok()) return adopted.status();
  recovered_ = std::move(adopted).value();
  return Status::Ok();
}

Result<std::vector<Node>> NodeManager::Adopt(bool include_own) {
  std::vector<db::NodeRow> rows;
  TPUEMU_RETURN_IF_ERROR(writes_.batcher().Run([&](db::Txn& txn) -> Status {
    Result<std::vector<db::NodeRow>> adopted =
        nodes_.AdoptOrphans(txn, options_.replica_id, include_own);
    if (!adopted.ok()) return adopted.status();
    rows = std::move(adopted).value();
    for (const db::NodeRow& row : rows) cache_.Touch(row.name);
    return Status::Ok();
  }));
  Result<std::vector<Node>> nodes = NodesFromRows(std::move(rows));
  if (!nodes.ok()) return nodes.status();
  // Soonest first, as the transitions were due.
  for (const Node& node : *nodes) {
    if (node.pending_operation) Schedule(node.key.Name(), node.pending_due_ms.value_or(0));
  }
  return nodes;
}

db::NodeRow NodeManager::Row(const Node& node) const {
  db::NodeRow row = NodeToRow(node);
  row.owner = options_.replica_id;
  return row;
}

std::shared_ptr<const NodeView> NodeManager::FindCurrent(const db::NodeRow& row) const {
  std::shared_ptr<const NodeView> view = cache_.Find(row.name);
  // One process: a cached view is never older than the row (node_cache.h). Several: it may be.
  if (view && options_.shared_store && !(view->row == row)) return nullptr;
  return view;
}

std::optional<NodeViewPage> NodeManager::CachedPage(const std::string& project,
                                                    const std::string& zone, int64_t after_seq,
                                                    int size) const {
  if (options_.shared_store) return std::nullopt;  // a cached view may be older than its row
  // The names only: a list of 100 nodes spent most of its time copying the 17 columns of 101
  // rows out of SQLite, for views the cache already held (bench/http).
  Result<std::vector<std::string>> names = nodes_.ListNames(project, zone, after_seq, size + 1);
  if (!names.ok()) return std::nullopt;  // ListViews reads the rows and reports the error
  NodeViewPage page;
  for (int i = 0; i < static_cast<int>(names->size()) && i < size; ++i) {
    // As FindCurrent with one writer: a cached view is never older than the row.
    std::shared_ptr<const NodeView> view = cache_.Find((*names)[i]);
    if (!view) return std::nullopt;  // not cached (or deleted since): read the rows
    page.nodes.push_back(std::move(view));
  }
  if (static_cast<int>(names->size()) > size) {
    page.next_page_token = EncodePageToken(kSeqPageToken, page.nodes.back()->node.seq);
  }
  return page;
}

Result<std::vector<Node>> NodeManager::ListOwned(int64_t after_seq, int limit) const {
  return NodesFromRows(nodes_.ListAll(after_seq, limit, options_.replica_id));
}

}  // namespace tpuemu::service
