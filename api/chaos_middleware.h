// The chaos rules (service/faults/chaos_rules.h) applied to API calls: a wrapper around the
// router, inside auth, so that a rule can fail any /v1…, /v2… (/v2alpha1 …) call before it
// reaches its handler, in Google's error envelope. A rule whose effect is `operationError` lets
// the call through and marks it (an internal request header, never taken from the client) so
// that nodes.create and queuedResources.create accept it and fail its Operation.
// Every fired rule is reported to the listener as a CHAOS fault.
#pragma once

#include "api/http_types.h"
#include "base/status.h"
#include "service/faults/chaos_rules.h"
#include "service/faults/fault_event.h"

namespace tpuemu::api {

// `rules` must outlive the handler.
AsyncHandlerFn WithChaos(service::ChaosRules& rules, service::FaultListener listener,
                         AsyncHandlerFn inner);

// OK, or the failure a chaos rule asked this create's Operation to end with.
Status InjectedOperationFault(const HttpRequest& request);

}  // namespace tpuemu::api
