// EventLog: the append-only, per-project feed of node, job and queued resource state changes and
// of faults behind GET /v2/projects/P/events?since=SEQ (long-poll capable).
//
// Durability: the managers append each event inside the SQLite transaction that commits the state
// change it describes (EventSink::Append, service/common/event_sink.h), so an acknowledged change
// always has its event, even across a kill -9. Every event gets a seq from SQLite that is never
// reused; `since` is a seq. Once the transaction committed the manager calls Published(), which
// wakes the long-polls waiting on that project (their callbacks run on the log's notifier thread,
// never on the committing one). Record() is for an event that is a change on its own (a chaos rule
// firing): it writes it in a transaction of its own.
// Retention is not the log's business: RetentionPruner (service/retention/) prunes old events.
// Threads: every public method may be called from any thread. The waiters, the callbacks due and
// the per-project high-water marks are guarded by mu_. The store is borrowed and must outlive the
// log; Stop() (or the destructor) runs the callbacks already due and drops the other waiters.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"
#include "db/event_repository.h"
#include "db/store.h"
#include "service/common/event_sink.h"

namespace tpuemu::service {

struct EventPage {
  std::vector<db::EventRow> events;
  int64_t next_since = 0;  // the last event's seq, or `since` when there is none
};

class EventLog : public EventSink {
 public:
  explicit EventLog(db::Store& store);
  ~EventLog() override;  // Stop()
  EventLog(const EventLog&) = delete;
  EventLog& operator=(const EventLog&) = delete;

  // EventSink: appends inside the change's transaction; wakes the waiters after its commit.
  Status Append(db::Txn& txn, db::EventRow& event) override;
  void Published(const db::EventRow& event) override;
  // Writes `event` in a transaction of its own and publishes it (an event that is its own change).
  Status Record(db::EventRow event);

  // Up to page_size (1..1000; 0 = 100) events of `project` with seq > since, oldest first.
  // INVALID_ARGUMENT naming pageSize or since when out of range.
  Result<EventPage> List(const std::string& project, int64_t since, int page_size) const;
  // Calls `fn` once `project` has an event with seq > since: now, on this thread, if it already
  // has; else on the notifier thread after that event commits. Returns an id for CancelWait.
  uint64_t WaitFor(const std::string& project, int64_t since, std::function<void()> fn);
  // Drops a waiter that has not fired (a long-poll that timed out). Unknown ids are ignored.
  void CancelWait(uint64_t id);
  // Returns once every waiter woken by an event published before the call has been called.
  void Flush();
  // Runs the callbacks due, fires nothing more, joins the notifier. Idempotent.
  void Stop();

 private:
  struct Waiter {
    std::string project;
    int64_t since = 0;
    std::function<void()> fn;
  };
  void Loop();

  db::Store& store_;
  db::EventRepository events_;

  mutable std::mutex mu_;
  std::condition_variable cv_;               // callbacks due, or stopping
  std::condition_variable idle_;             // the due callbacks ran
  std::deque<std::function<void()>> due_;    // guarded by mu_
  bool firing_ = false;                      // the notifier runs callbacks; guarded by mu_
  bool stopping_ = false;                    // guarded by mu_
  std::map<std::string, int64_t> last_seq_;  // project -> newest published seq; guarded by mu_
  std::map<uint64_t, Waiter> waiters_;       // guarded by mu_
  uint64_t next_waiter_ = 1;                 // guarded by mu_
  std::thread notifier_;
};

}  // namespace tpuemu::service
