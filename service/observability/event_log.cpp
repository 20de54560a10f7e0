#include "service/observability/event_log.h"

#include "service/common/clock.h"
#include "service/common/page_token.h"

namespace tpuemu::service {
EventLog::EventLog(db::Store& store) : store_(store), events_(store) {
  notifier_ = std::thread([this] { Loop(); });
}

EventLog::~EventLog() { Stop(); }

void EventLog::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (notifier_.joinable()) notifier_.join();
  std::lock_guard lock(mu_);
  waiters_.clear();
}

Status EventLog::Append(db::Txn& txn, db::EventRow& event) {
  const auto now = std::chrono::system_clock::now();
  event.time = FormatRfc3339(now);
  event.time_unix_ms = ToUnixMs(now);
  Result<int64_t> seq = events_.Append(txn, event);
  if (!seq.ok()) return seq.status();
  event.seq = *seq;
  return Status::Ok();
}

void EventLog::Published(const db::EventRow& event) {
  bool woke = false;
  {
    std::lock_guard lock(mu_);
    int64_t& last = last_seq_[event.project];
    last = std::max(last, event.seq);
    for (auto it = waiters_.begin(); it != waiters_.end();) {
      const bool mine = event.project == "*" || it->second.project == event.project;
      if (mine && event.seq > it->second.since) {
        due_.push_back(std::move(it->second.fn));
        it = waiters_.erase(it);
        woke = true;
      } else {
        ++it;
      }
    }
  }
  if (woke) cv_.notify_one();
}

Status EventLog::Record(db::EventRow event) {
  TPUEMU_RETURN_IF_ERROR(store_.Transaction([&](db::Txn& txn) { return Append(txn, event); }));
  Published(event);
  return Status::Ok();
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
    // Published() raises last_seq_ under mu_, so an event that committed after the read above is
    // seen here, and one published later finds this waiter registered.
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
  idle_.wait(lock, [&] { return due_.empty() && !firing_; });
}

void EventLog::Loop() {
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stopping_ || !due_.empty(); });
    if (due_.empty()) break;  // stopping, nothing due
    std::deque<std::function<void()>> fire;
    fire.swap(due_);
    firing_ = true;
    lock.unlock();
    for (auto& fn : fire) fn();
    lock.lock();
    firing_ = false;
    idle_.notify_all();
  }
  idle_.notify_all();
}

}  // namespace tpuemu::service
