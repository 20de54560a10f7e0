#include "service/queued_resources/qr_event.h"

namespace tpuemu::service {

db::EventRow QueuedResourceEvent(const QueuedResource& qr, QrState previous) {
  db::EventRow e;
  e.project = qr.key.project;
  e.kind = "queuedResource";
  e.resource = qr.key.Name();
  e.zone = qr.key.zone;
  e.state = qr.state == QrState::kUnspecified ? "DELETED" : QrStateName(qr.state);
  if (previous != QrState::kUnspecified) e.previous_state = QrStateName(previous);
  e.message =
      "queued resource " + qr.key.id + " " +
      (e.previous_state ? *e.previous_state + " -> " + e.state : "created (" + e.state + ")");
  if (qr.state == QrState::kFailed && !qr.error.ok()) e.message += ": " + qr.error.message();
  if (qr.initiator == QrInitiator::kService &&
      (qr.state == QrState::kSuspending || qr.state == QrState::kSuspended)) {
    e.message += " (by the service)";
  }
  return e;
}

}  // namespace tpuemu::service
