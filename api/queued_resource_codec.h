// JSON codecs for the QueuedResource resource on the wire: the create body (v2 and v2alpha1
// spellings, snake_case already normalized by the caller) with Google-style type errors, and the
// enum-encoding=int form.
#pragma once

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "service/queued_resources/queued_resource.h"

namespace tpuemu::api {

// A QueuedResource body -> QueuedResourceSpec. Type errors are INVALID_ARGUMENT naming the field
// ("Invalid value at 'queued_resource.tpu.node_spec[0].node_id' (TYPE_STRING), 5"); each
// nodeSpec's node is decoded as nodes.create decodes a Node (DecodeNode). Both multisliceParams
// (v2) and multiNodeParams (v2alpha1) are accepted; at most one of spot, guaranteed and
// bestEffort; queueingPolicy holds at most one of its timing constraints (durations like "3600s",
// RFC 3339 times, validInterval {startTime, endTime}). Output-only fields are ignored.
Result<service::QueuedResourceSpec> DecodeQueuedResource(const nlohmann::json& body);

// Rewrites enum names to numbers in a rendered QueuedResource (state.state,
// state.stateInitiator, and each nodeSpec's node).
void QueuedResourceEnumsToInt(nlohmann::json& queued_resource);

}  // namespace tpuemu::api
