#include "service/observability/event_log.h"

#include "service/common/clock.h"

namespace tpuemu::service {
namespace {

constexpr int kDefaultPageSize = 100;
constexpr int kMaxPageSize = 1000;
constexpr int64_t kPruneEvery = 256;  // appends between two retention passes

}  // namespace

EventLog::EventLog(db::Store& store, EventLogOptions options)
    : store_(store), options_(options), events_(store) {
  writer_ = std::thread([this] { Loop(); });
}

EventLog::~EventLog() { Stop(); }

void EventLog::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (writer_.joinable()) writer_.join();
  std::lock_guard lock(mu_);
  waiters_.clear();
}

void EventLog::Append(db::EventRow event) {
  const auto now = std::chrono::system_clock::now();
  event.time = FormatRfc3339(now);
  event.time_unix_ms = ToUnixMs(now);
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    queue_.push_back(std::move(event));
    ++queued_;
  }
  cv_.notify_one();
}

void EventLog::OnNodeStateChanged(const Node& node, NodeState previous) {
  db::EventRow e;
  e.project = node.key.project;
  e.kind = "node";
  e.resource = node.key.Name();
  e.zone = node.key.zone;
  e.state = node.state == NodeState::kUnspecified ? "DELETED" : NodeStateName(node.state);
  if (previous != NodeState::kUnspecified) e.previous_state = NodeStateName(previous);
  e.message =
      "node " + node.key.node_id + " " +
      (e.previous_state ? *e.previous_state + " -> " + e.state : "created (" + e.state + ")");
  Append(std::move(e));
}

void EventLog::OnJobStateChanged(const Job& job, std::optional<JobState> previous) {
  db::EventRow e;
  e.project = job.project;
  e.kind = "job";
  e.resource = job.name;
  e.zone = job.zone;
  e.state = std::string(JobStateName(job.state));
  if (previous) e.previous_state = std::string(JobStateName(*previous));
  e.message = "job " + job.job_id + " ";
  if (!previous) {
    e.message += "queued on node " + job.node_id;
  } else {
    e.message += *e.previous_state + " -> " + e.state;
    // Re-queued after a restart or a fault it is retried after.
    if (job.state == JobState::kQueued)
      e.message += " (attempt " + std::to_string(job.attempt) + ")";
    if (job.exit_code && job.reason) {
      e.message += " (exit code " + std::to_string(*job.exit_code) + ": " + *job.reason + ")";
    }
  }
  Append(std::move(e));
}

void EventLog::OnQueuedResourceStateChanged(const QueuedResource& qr, QrState previous) {
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
  Append(std::move(e));
}

void EventLog::OnFault(const FaultEvent& fault) {
  db::EventRow e;
  e.project = fault.project;
  e.kind = "fault";
  e.resource = fault.resource;
  e.zone = fault.zone;
  e.state = fault.kind;
  e.message = fault.message;
  Append(std::move(e));
}

Result<EventPage> EventLog::List(const std::string& project, int64_t since, int page_size) const {
  if (page_size < 0 || page_size > kMaxPageSize) {
    return Status::InvalidArgument("pageSize must be 0.." + std::to_string(kMaxPageSize));
  }
  if (since < 0) return Status::InvalidArgument("since must be a non-negative event seq");
  Result<std::vector<db::EventRow>> rows =
      events_.List(project, since, page_size == 0 ? kDefaultPageSize : page_size);
  if (!rows.ok()) return rows.status();
  EventPage page;
  page.events = std::move(rows).value();
  page.next_since = page.events.empty() ? since : page.events.back().seq;
  return page;
}

uint64_t EventLog::WaitFor(const std::string& project, int64_t since, std::function<void()> fn) {
  // Events from before this process started are only in the store.
  Result<std::vector<db::EventRow>> stored = events_.List(project, since, 1);
  bool ready = stored.ok() && !stored->empty();
  uint64_t id = 0;
  {
    std::lock_guard lock(mu_);
    // The writer updates last_seq_ after each commit under mu_, so an event that committed after
    // the read above is seen here, and one that commits later finds this waiter registered.
    auto it = last_seq_.find(project);
    auto everyone = last_seq_.find("*");
    ready = ready || (it != last_seq_.end() && it->second > since) ||
            (everyone != last_seq_.end() && everyone->second > since) || stopping_;
    if (!ready) {
      id = next_waiter_++;
      waiters_[id] = Waiter{project, since, std::move(fn)};
    }
  }
  if (ready) fn();
  return id;
}

void EventLog::CancelWait(uint64_t id) {
  std::lock_guard lock(mu_);
  waiters_.erase(id);
}

void EventLog::Flush() {
  std::unique_lock lock(mu_);
  const uint64_t target = queued_;
  flushed_.wait(lock, [&] { return written_ >= target; });
}

void EventLog::Loop() {
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) break;  // stopping and drained
    std::vector<db::EventRow> batch(std::make_move_iterator(queue_.begin()),
                                    std::make_move_iterator(queue_.end()));
    queue_.clear();
    lock.unlock();
    WriteBatch(batch);
    std::vector<std::function<void()>> fire;
    lock.lock();
    for (const db::EventRow& e : batch) {
      if (e.seq > 0) last_seq_[e.project] = std::max(last_seq_[e.project], e.seq);
    }
    const auto everyone = last_seq_.find("*");
    for (auto it = waiters_.begin(); it != waiters_.end();) {
      auto seq = last_seq_.find(it->second.project);
      if ((seq != last_seq_.end() && seq->second > it->second.since) ||
          (everyone != last_seq_.end() && everyone->second > it->second.since)) {
        fire.push_back(std::move(it->second.fn));
        it = waiters_.erase(it);
      } else {
        ++it;
      }
    }
    written_ += batch.size();
    lock.unlock();
    flushed_.notify_all();
    for (auto& fn : fire) fn();
    lock.lock();
  }
  written_ = queued_;
  flushed_.notify_all();
}

void EventLog::WriteBatch(std::vector<db::EventRow>& batch) {
  appended_since_prune_ += static_cast<int64_t>(batch.size());
  const bool prune = appended_since_prune_ >= kPruneEvery;
  Status s = store_.Transaction([&](db::Txn& txn) -> Status {
    for (db::EventRow& e : batch) {
      Result<int64_t> seq = events_.Append(txn, e);
      if (!seq.ok()) return seq.status();
      e.seq = *seq;
    }
    if (prune) {
      Result<int64_t> removed =
          events_.Prune(txn, options_.max_events, NowUnixMs() - options_.retention_seconds * 1000);
      if (!removed.ok()) return removed.status();
    }
    return Status::Ok();
  });
  if (s.ok()) {
    if (prune) appended_since_prune_ = 0;
    return;
  }
  // The store refused (busy for 5 s, I/O error): these events are lost; the state changes they
  // describe are not (they committed before). Seq 0 marks them unwritten.
  for (db::EventRow& e : batch) e.seq = 0;
}

}  // namespace tpuemu::service
