#include "service/faults/fault_event.h"

namespace tpuemu::service {

db::EventRow FaultEventRow(const FaultEvent& fault) {
  db::EventRow e;
  e.project = fault.project;
  e.kind = "fault";
  e.resource = fault.resource;
  e.zone = fault.zone;
  e.state = fault.kind;
  e.message = fault.message;
  return e;
}

}  // namespace tpuemu::service
