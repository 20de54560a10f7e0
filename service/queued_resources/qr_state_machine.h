// The queued resource life cycle (docs/faults.md has the picture):
//
//   CREATING -> ACCEPTED -> (validAfter reached) WAITING_FOR_RESOURCES while the zone (or the
//   reservation) lacks room -> PROVISIONING (capacity taken, nodes created) -> ACTIVE once every
//   node is READY; ACCEPTED/WAITING past validUntil -> FAILED (SERVICE); a node preempted or
//   deleted -> SUSPENDING (its nodes are deleted) -> SUSPENDED; reset (SUSPENDED, FAILED) ->
//   ACCEPTED again; delete -> DELETING (its nodes are deleted) -> gone.
//
// These are the rules a client's call is checked against; the transitions the service makes on
// its own are the reconciler's (queued_resource_manager.cpp). Pure functions.
#pragma once

#include <string_view>

#include "base/status.h"
#include "service/queued_resources/queued_resource.h"

namespace tpuemu::service {

// queuedResources.delete. Without force: OK in ACCEPTED, WAITING_FOR_RESOURCES, FAILED and
// SUSPENDED, and in any other state once the queued resource has no node left; with force also
// while it has nodes (they are deleted first). Never while CREATING or DELETING.
// FAILED_PRECONDITION naming the queued resource and its state otherwise.
Status CheckDelete(std::string_view name, QrState state, bool has_nodes, bool force);
// queuedResources.reset: OK from SUSPENDED and FAILED once no node is left (a FAILED queued
// resource still cleaning up its nodes must finish first).
Status CheckReset(std::string_view name, QrState state, bool has_nodes);
// ACCEPTED or WAITING_FOR_RESOURCES: queued, holding no capacity.
bool IsQueued(QrState state);

}  // namespace tpuemu::service
