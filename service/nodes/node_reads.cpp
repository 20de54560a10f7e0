// The reads of NodeManager (see the header): one node and pages of a zone's nodes as cached views,
// from the node cache where it holds the current row (always, when this process is the store's only
// writer) and from the store otherwise. Split from node_manager.cpp, which owns the verbs.
#include "service/common/not_found.h"
#include "service/common/page_token.h"
#include "service/nodes/node_manager.h"
#include "service/nodes/node_rows.h"

namespace tpuemu::service {

Result<Node> NodeManager::Get(const NodeKey& key) const {
  Result<std::shared_ptr<const NodeView>> view = GetView(key);
  if (!view.ok()) return view.status();
  return (*view)->node;
}

Result<std::shared_ptr<const NodeView>> NodeManager::GetView(const NodeKey& key) const {
  const std::string name = key.Name();
  if (!options_.shared_store) {
    if (std::shared_ptr<const NodeView> cached = cache_.Find(name)) return cached;
  }
  const uint64_t generation = cache_.Generation();
  Result<db::NodeRow> row = nodes_.Get(name);
  if (!row.ok()) return NotFoundAs(row.status(), name);
  if (std::shared_ptr<const NodeView> cached = FindCurrent(*row)) return cached;
  Result<Node> node = NodeFromRow(*row);
  if (!node.ok()) return node.status();
  // The row is kept only where reads compare it (a shared store).
  return cache_.Insert(std::move(node).value(), generation,
                       options_.shared_store ? std::move(row).value() : db::NodeRow());
}

Result<NodePage> NodeManager::List(const std::string& project, const std::string& zone,
                                   const PageRequest& page) const {
  Result<NodeViewPage> views = ListViews(project, zone, page);
  if (!views.ok()) return views.status();
  NodePage out;
  for (const auto& view : views->nodes) out.nodes.push_back(view->node);
  out.next_page_token = std::move(views->next_page_token);
  return out;
}

Result<NodeViewPage> NodeManager::ListViews(const std::string& project, const std::string& zone,
                                            const PageRequest& page) const {
  TPUEMU_RETURN_IF_ERROR(catalog_.CheckListLocation(project, zone));
  Result<int64_t> after = DecodePageToken(kSeqPageToken, page.page_token);
  if (!after.ok()) return after.status();
  const int size = PageSize(page, kDefaultPageSize);
  if (std::optional<NodeViewPage> cached = CachedPage(project, zone, *after, size)) return *cached;
  const uint64_t generation = cache_.Generation();
  Result<std::vector<db::NodeRow>> rows = nodes_.List(project, zone, *after, size + 1);
  if (!rows.ok()) return rows.status();
  NodeViewPage out;
  for (int i = 0; i < static_cast<int>(rows->size()) && i < size; ++i) {
    // A cached view was filled after the last batch of writes ended: never older than the row.
    std::shared_ptr<const NodeView> view = FindCurrent((*rows)[i]);
    if (!view) {
      Result<Node> node = NodeFromRow((*rows)[i]);
      if (!node.ok()) return node.status();
      view = cache_.Insert(std::move(node).value(), generation,
                           options_.shared_store ? (*rows)[i] : db::NodeRow());
    }
    out.nodes.push_back(std::move(view));
  }
  if (static_cast<int>(rows->size()) > size) {
    out.next_page_token = EncodePageToken(kSeqPageToken, out.nodes.back()->node.seq);
  }
  return out;
}

Result<std::vector<Node>> NodeManager::ListOfQueuedResource(
    const std::string& queued_resource) const {
  return NodesFromRows(nodes_.ListByQueuedResource(queued_resource));
}

}  // namespace tpuemu::service
