#include "service/nodes/node_state_machine.h"

#include <string>

namespace tpuemu::service {

std::string_view NodeVerbName(NodeVerb verb) {
  switch (verb) {
    case NodeVerb::kCreate:
      return "create";
    case NodeVerb::kStart:
      return "start";
    case NodeVerb::kStop:
      return "stop";
    case NodeVerb::kDelete:
      return "delete";
    case NodeVerb::kUpdate:
      return "update";
  }
  return "update";
}

Result<NodeVerb> ParseNodeVerb(std::string_view name) {
  for (NodeVerb v : {NodeVerb::kCreate, NodeVerb::kStart, NodeVerb::kStop, NodeVerb::kDelete,
                     NodeVerb::kUpdate}) {
    if (NodeVerbName(v) == name) return v;
  }
  return Status::Internal("unknown operation verb '" + std::string(name) + "'");
}

Status CheckTransition(std::string_view node_name, NodeState state, NodeVerb verb) {
  bool allowed = false;
  switch (verb) {
    case NodeVerb::kCreate:
      allowed = false;
      break;  // creation never starts from an existing node
    case NodeVerb::kStart:
      allowed = state == NodeState::kStopped;
      break;
    case NodeVerb::kStop:
      allowed = state == NodeState::kReady;
      break;
    case NodeVerb::kDelete:
      // A preempted node cannot be started again, only deleted.
      allowed = state == NodeState::kReady || state == NodeState::kStopped ||
                state == NodeState::kPreempted;
      break;
    case NodeVerb::kUpdate:
      allowed = state == NodeState::kReady || state == NodeState::kStopped;
      break;
  }
  if (allowed) return Status::Ok();
  return Status::FailedPrecondition("Cannot " + std::string(NodeVerbName(verb)) + " node '" +
                                    std::string(node_name) + "' in state " +
                                    std::string(NodeStateName(state)) + ".");
}

NodeState TransientState(NodeVerb verb, NodeState current) {
  switch (verb) {
    case NodeVerb::kCreate:
      return NodeState::kCreating;
    case NodeVerb::kStart:
      return NodeState::kStarting;
    case NodeVerb::kStop:
      return NodeState::kStopping;
    case NodeVerb::kDelete:
      return NodeState::kDeleting;
    case NodeVerb::kUpdate:
      return current;
  }
  return current;
}

std::optional<NodeState> FinalState(NodeVerb verb, NodeState current) {
  switch (verb) {
    case NodeVerb::kCreate:
    case NodeVerb::kStart:
      return NodeState::kReady;
    case NodeVerb::kStop:
      return NodeState::kStopped;
    case NodeVerb::kDelete:
      return std::nullopt;
    case NodeVerb::kUpdate:
      return current;
  }
  return current;
}

}  // namespace tpuemu::service
