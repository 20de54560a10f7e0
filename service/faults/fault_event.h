// FaultEvent: what the fault injectors report when they act — a preemption, a maintenance event
// starting or ending, a chaos rule firing, a zone's capacity changing — for the events feed and
// the dashboard (each injector writes its FaultEventRow in the transaction of the change it made;
// docs/retention.md) and for whatever must react (running jobs are interrupted on
// MAINTENANCE_STARTED).
#pragma once

#include <functional>
#include <string>

#include "db/event_repository.h"

namespace tpuemu::service {

struct FaultEvent {
  std::string project;  // "*" for a fault of no one project (a zone's capacity)
  std::string zone;
  std::string resource;  // full resource name (node, queued resource, request path, zone)
  std::string kind;      // PREEMPTED, MAINTENANCE_STARTED, MAINTENANCE_ENDED,
                         // MAINTENANCE_SCHEDULED, CHAOS, CAPACITY
  std::string message;
};

// The events-feed row of a fault (kind "fault", state = the fault's kind).
db::EventRow FaultEventRow(const FaultEvent& fault);

// Called on the thread that caused the fault, after its change committed; must be quick.
using FaultListener = std::function<void(const FaultEvent&)>;

}  // namespace tpuemu::service
