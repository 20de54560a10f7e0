// Conversions between the service's Node/Operation and db's rows. The only file that knows both.
#pragma once

#include "base/status.h"
#include "db/node_repository.h"
#include "db/operation_repository.h"
#include "service/nodes/node.h"
#include "service/operations/operation.h"

namespace tpuemu::service {

db::NodeRow NodeToRow(const Node& node);
// INTERNAL when the row cannot be understood (unknown state or type, bad JSON).
Result<Node> NodeFromRow(const db::NodeRow& row);
db::OperationRow OperationToRow(const Operation& op);
Result<Operation> OperationFromRow(const db::OperationRow& row);

}  // namespace tpuemu::service
