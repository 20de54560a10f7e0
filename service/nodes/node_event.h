// The events-feed row of a node state change (kind "node"): a deleted node is reported with state
// "DELETED", a new one has no previousState. Written by NodeManager in the change's transaction.
#pragma once

#include "db/event_repository.h"
#include "service/nodes/node.h"

namespace tpuemu::service {

db::EventRow NodeEvent(const Node& node, NodeState previous);

}  // namespace tpuemu::service
