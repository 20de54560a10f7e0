// PlanQueuedResource: checks a queuedResources.create request and expands it into the nodes it
// asks for — one per nodeSpec with a nodeId, nodeCount named <prefix>-0 … <prefix>-(N-1) for a
// multislice one (the prefix defaults to the queued resource id) — with the scheduling the tier
// implies (spot -> schedulingConfig.spot, bestEffort -> preemptible, a reservation -> reserved).
#pragma once

#include "base/status.h"
#include "service/nodes/node_manager.h"
#include "service/queued_resources/queued_resource.h"

namespace tpuemu::service {

// The queued resource as it will be stored, in no state yet. INVALID_ARGUMENT naming the field:
// a queued resource id outside ^[A-Za-z0-9_.~+%-]+$ (1-63 characters), no nodeSpec, a nodeSpec
// with both or neither of nodeId and multisliceParams, nodeCount below 2, a parent other than
// the queued resource's, generated node ids that are not valid node ids, the same node twice,
// and whatever nodes.create would refuse in the node (NodeManager::CheckSpec); NOT_FOUND for an
// unknown zone.
Result<QueuedResource> PlanQueuedResource(const QrKey& key, const QueuedResourceSpec& spec,
                                          const NodeManager& nodes);

}  // namespace tpuemu::service
