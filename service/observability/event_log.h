// EventLog: the append-only, per-project feed of node, job and queued resource state changes and
// of faults behind
// GET /v2/projects/P/events?since=SEQ (long-poll capable).
//
// Append() only queues: one writer thread persists queued events in order, many per transaction,
// right after the state change they describe has committed (a kill -9 in between loses at most
// those few events), then wakes the long-polls waiting on their project. Every event gets a seq
// from SQLite that is never reused; `since` is a seq. Retention: the newest `max_events` events and
// none older than `retention_seconds` are kept, pruned as the writer goes.
// Threads: every public method may be called from any thread; the observer hooks are cheap (they
// queue). The queue, the waiters and the per-project high-water marks are guarded by mu_. The
// store is borrowed and must outlive the log; Stop() (or the destructor) drains the queue first.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"
#include "db/event_repository.h"
#include "db/store.h"
#include "service/faults/fault_event.h"
#include "service/jobs/job.h"
#include "service/nodes/node.h"
#include "service/queued_resources/queued_resource.h"

namespace tpuemu::service {

struct EventLogOptions {
  int64_t max_events = 100000;
  int64_t retention_seconds = 7 * 86400;
};

struct EventPage {
  std::vector<db::EventRow> events;
  int64_t next_since = 0;  // the last event's seq, or `since` when there is none
};

class EventLog {
 public:
  EventLog(db::Store& store, EventLogOptions options = {});
  ~EventLog();  // Stop()
  EventLog(const EventLog&) = delete;
  EventLog& operator=(const EventLog&) = delete;

  // Queues an event (seq and time are filled in here and by the writer).
  void Append(db::EventRow event);
  // Observer hooks: NodeManager's state observer and JobManager's transition observer. A deleted
  // node is reported with state "DELETED"; a new resource has no previousState.
  void OnNodeStateChanged(const Node& node, NodeState previous);
  void OnJobStateChanged(const Job& job, std::optional<JobState> previous);
  // Queued resource state changes (kind "queuedResource"; a deleted one is "DELETED") and faults
  // (kind "fault", state = the fault's kind: PREEMPTED, MAINTENANCE_STARTED, CHAOS, …).
  void OnQueuedResourceStateChanged(const QueuedResource& qr, QrState previous);
  void OnFault(const FaultEvent& fault);

  // Up to page_size (1..1000; 0 = 100) events of `project` with seq > since, oldest first.
  // INVALID_ARGUMENT naming pageSize or since when out of range.
  Result<EventPage> List(const std::string& project, int64_t since, int page_size) const;
  // Calls `fn` once `project` has an event with seq > since: now, on this thread, if it already
  // has; else on the writer thread after that event commits. Returns an id for CancelWait.
  uint64_t WaitFor(const std::string& project, int64_t since, std::function<void()> fn);
  // Drops a waiter that has not fired (a long-poll that timed out). Unknown ids are ignored.
  void CancelWait(uint64_t id);
  // Returns once every event queued before the call is written (tests, shutdown).
  void Flush();
  // Drains the queue, fires nothing more, joins the writer. Idempotent.
  void Stop();

 private:
  struct Waiter {
    std::string project;
    int64_t since = 0;
    std::function<void()> fn;
  };
  void Loop();
  void WriteBatch(std::vector<db::EventRow>& batch);

  db::Store& store_;
  const EventLogOptions options_;
  db::EventRepository events_;

  mutable std::mutex mu_;
  std::condition_variable cv_;               // new events or stopping
  std::condition_variable flushed_;          // written_ advanced
  std::deque<db::EventRow> queue_;           // guarded by mu_
  uint64_t queued_ = 0;                      // events ever queued; guarded by mu_
  uint64_t written_ = 0;                     // events ever handled by the writer; guarded by mu_
  bool stopping_ = false;                    // guarded by mu_
  std::map<std::string, int64_t> last_seq_;  // project -> newest written seq; guarded by mu_
  std::map<uint64_t, Waiter> waiters_;       // guarded by mu_
  uint64_t next_waiter_ = 1;                 // guarded by mu_
  int64_t appended_since_prune_ = 0;         // writer thread only
  std::thread writer_;
};

}  // namespace tpuemu::service
