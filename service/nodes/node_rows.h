// Conversions between the service's Node and db's NodeRow: the only file that knows both.
#pragma once

#include <vector>

#include "base/status.h"
#include "db/node_repository.h"
#include "service/nodes/node.h"

namespace tpuemu::service {

// update_time is set to now; resource_json holds NodeToStorage(node).
db::NodeRow NodeToRow(const Node& node);
// INTERNAL naming the node when the row cannot be understood (unknown state or type, bad JSON).
Result<Node> NodeFromRow(const db::NodeRow& row);
// Every row through NodeFromRow, or the first error (of the read, or of a row).
Result<std::vector<Node>> NodesFromRows(const Result<std::vector<db::NodeRow>>& rows);

}  // namespace tpuemu::service
