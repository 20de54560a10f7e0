#include "service/retention/retention_pruner.h"

#include <algorithm>
#include <chrono>

#include "service/common/clock.h"

namespace tpuemu::service {
namespace {

std::string TimeOf(int64_t unix_ms) {
  return FormatRfc3339(WallTime(std::chrono::milliseconds(unix_ms)));
}

}  // namespace

RetentionPruner::RetentionPruner(db::Store& store, RetentionOptions options)
    : store_(store), options_(std::move(options)), retention_(store) {}

RetentionPruner::~RetentionPruner() { Stop(); }

void RetentionPruner::Start() {
  if (options_.interval_ms <= 0 || thread_.joinable()) return;
  thread_ = std::thread([this] { Loop(); });
}

void RetentionPruner::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void RetentionPruner::Loop() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    if (wake_.wait_for(lock, std::chrono::milliseconds(options_.interval_ms),
                       [&] { return stopping_; })) {
      break;
    }
    lock.unlock();
    (void)PruneOnce();  // a busy store is retried at the next interval
    lock.lock();
  }
}

Result<int64_t> RetentionPruner::Drain(const std::function<Result<int64_t>(db::Txn&)>& one,
                                       PruneCounts& counts) {
  int64_t total = 0;
  for (;;) {
    {
      std::lock_guard lock(mu_);
      if (stopping_) return total;
    }
    int64_t removed = 0;
    TPUEMU_RETURN_IF_ERROR(store_.Transaction([&](db::Txn& txn) -> Status {
      Result<int64_t> n = one(txn);
      if (!n.ok()) return n.status();
      removed = *n;
      return Status::Ok();
    }));
    ++counts.transactions;
    counts.max_rows_in_a_transaction = std::max(counts.max_rows_in_a_transaction, removed);
    total += removed;
    if (removed < options_.batch_rows) return total;
  }
}

Result<PruneCounts> RetentionPruner::PruneOnce() {
  std::lock_guard pass(pass_mu_);
  const int64_t now = options_.now_ms ? options_.now_ms() : NowUnixMs();
  const int limit = std::max(1, options_.batch_rows);
  PruneCounts counts;
  auto drain = [&](int64_t& into, const std::function<Result<int64_t>(db::Txn&)>& one) -> Status {
    Result<int64_t> n = Drain(one, counts);
    if (!n.ok()) return n.status();
    into += *n;
    return Status::Ok();
  };
  if (options_.jobs_seconds > 0) {
    const std::string before = TimeOf(now - options_.jobs_seconds * 1000);
    // Their logs and steps first, in bounded batches: a job of many steps is not one big delete.
    TPUEMU_RETURN_IF_ERROR(drain(counts.job_log_lines, [&](db::Txn& txn) {
      return retention_.DeleteJobLogs(txn, "", before, limit);
    }));
    TPUEMU_RETURN_IF_ERROR(drain(counts.job_steps, [&](db::Txn& txn) {
      return retention_.DeleteJobSteps(txn, "", before, limit);
    }));
    TPUEMU_RETURN_IF_ERROR(drain(
        counts.jobs, [&](db::Txn& txn) { return retention_.DeleteJobs(txn, before, limit); }));
  }
  if (options_.job_logs_seconds > 0) {
    const std::string before = TimeOf(now - options_.job_logs_seconds * 1000);
    TPUEMU_RETURN_IF_ERROR(drain(counts.job_log_lines, [&](db::Txn& txn) {
      return retention_.DeleteJobLogs(txn, logs_done_before_, before, limit);
    }));
    logs_done_before_ = before;
  }
  if (options_.job_steps_seconds > 0) {
    const std::string before = TimeOf(now - options_.job_steps_seconds * 1000);
    TPUEMU_RETURN_IF_ERROR(drain(counts.job_steps, [&](db::Txn& txn) {
      return retention_.DeleteJobSteps(txn, steps_done_before_, before, limit);
    }));
    steps_done_before_ = before;
  }
  if (options_.operations_seconds > 0) {
    const int64_t cutoff_ms = now - options_.operations_seconds * 1000;
    const std::string before = TimeOf(cutoff_ms);
    TPUEMU_RETURN_IF_ERROR(drain(counts.operations, [&](db::Txn& txn) {
      return retention_.DeleteOperations(txn, before, limit);
    }));
    TPUEMU_RETURN_IF_ERROR(drain(counts.request_ids, [&](db::Txn& txn) {
      return retention_.DeleteRequestIds(txn, cutoff_ms, limit);
    }));
  }
  if (options_.events_seconds > 0) {
    const int64_t before_ms = now - options_.events_seconds * 1000;
    TPUEMU_RETURN_IF_ERROR(drain(counts.events, [&](db::Txn& txn) {
      return retention_.DeleteEvents(txn, before_ms, limit);
    }));
  }
  if (options_.max_events > 0) {
    TPUEMU_RETURN_IF_ERROR(drain(counts.events, [&](db::Txn& txn) {
      return retention_.DeleteEventsOverMax(txn, options_.max_events, limit);
    }));
  }
  if (counts.Total() > 0) {
    for (;;) {
      Result<int64_t> free_pages = retention_.FreePages();
      if (!free_pages.ok()) return free_pages.status();
      if (*free_pages == 0) break;
      {
        std::lock_guard lock(mu_);
        if (stopping_) break;
      }
      TPUEMU_RETURN_IF_ERROR(retention_.IncrementalVacuum(options_.vacuum_pages));
      Result<int64_t> left = retention_.FreePages();
      if (!left.ok()) return left.status();
      if (*left >= *free_pages) break;  // not INCREMENTAL (an old file): nothing to give back
    }
  }
  return counts;
}

}  // namespace tpuemu::service
