#include "service/nodes/node_event.h"

namespace tpuemu::service {

db::EventRow NodeEvent(const Node& node, NodeState previous) {
  db::EventRow e;
  e.project = node.key.project;
  e.kind = "node";
  e.resource = node.key.Name();
  e.zone = node.key.zone;
  e.state = node.state == NodeState::kUnspecified ? "DELETED" : NodeStateName(node.state);
  if (previous != NodeState::kUnspecified) e.previous_state = NodeStateName(previous);
  e.message =
      "node " + node.key.node_id + " " +
      (e.previous_state ? *e.previous_state + " -> " + e.state : "created (" + e.state + ")");
  return e;
}

}  // namespace tpuemu::service
