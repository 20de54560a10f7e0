// EventSink: where the event of a state change goes — into the SQLite transaction that commits the
// change itself, so the change and its event are durable together or not at all (a kill -9 can no
// longer keep one and lose the other; docs/retention.md). EventLog
// (service/observability/event_log.h) implements it; the managers hold a borrowed pointer to it,
// null when nothing records events (unit tests).
//
// PendingEvents collects the events one state change appended and publishes them once the
// transaction committed: publishing only wakes the readers long-polling for them, so a body that
// failed (and whose rows rolled back) must never be published.
//
// Threads: EventSink implementations are thread-safe. A PendingEvents belongs to one call.
#pragma once

#include <vector>

#include "base/status.h"
#include "db/event_repository.h"
#include "db/store.h"

namespace tpuemu::service {

class EventSink {
 public:
  virtual ~EventSink() = default;
  // Inside the write transaction of the change `event` describes: fills in its time and appends
  // it (event.seq set). A non-OK status must fail that transaction.
  virtual Status Append(db::Txn& txn, db::EventRow& event) = 0;
  // Once that transaction committed: wakes the readers waiting for the event's project.
  virtual void Published(const db::EventRow& event) = 0;
};

class PendingEvents {
 public:
  explicit PendingEvents(EventSink* sink) : sink_(sink) {}

  // Appends through the sink inside `txn` (OK and nothing written without a sink).
  Status Append(db::Txn& txn, db::EventRow event);
  // After the commit: publishes every event appended so far, in order, and forgets them.
  void Publish();

 private:
  EventSink* sink_;                 // borrowed; may be null
  std::vector<db::EventRow> rows_;  // appended, not yet published
};

}  // namespace tpuemu::service
