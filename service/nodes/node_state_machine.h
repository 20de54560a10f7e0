// The node life cycle: CREATING -> READY, STOPPING -> STOPPED, STARTING -> READY, DELETING -> gone;
// a spot or preemptible READY node may be PREEMPTED by a fault (service/faults/preemption.h), after
// which it can only be deleted.
// Each mutating verb has a state it may start from, a transient state while its Operation runs, and
// a final state when the Operation completes.
#pragma once

#include <optional>
#include <string_view>

#include "base/status.h"
#include "service/nodes/node.h"

namespace tpuemu::service {

enum class NodeVerb { kCreate, kStart, kStop, kDelete, kUpdate };
std::string_view NodeVerbName(NodeVerb verb);  // "create", "start", … as in OperationMetadata.verb
Result<NodeVerb> ParseNodeVerb(std::string_view name);

// FAILED_PRECONDITION naming the node, its state and the verb when `verb` may not start from
// `state` (start a READY node, stop a STOPPED one, anything while
// CREATING/DELETING/STOPPING/STARTING).
Status CheckTransition(std::string_view node_name, NodeState state, NodeVerb verb);
// The state a node shows while the verb's Operation runs (update keeps the current state).
NodeState TransientState(NodeVerb verb, NodeState current);
// The state once the Operation completes; nullopt for delete (the node is gone).
std::optional<NodeState> FinalState(NodeVerb verb, NodeState current);

}  // namespace tpuemu::service
