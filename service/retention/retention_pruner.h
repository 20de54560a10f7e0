// RetentionPruner: deletes what has outlived its retention, in the background, and gives the
// space back — terminal jobs (with their logs, step series and programs), the log lines and the
// step series of finished jobs on their own, done operations (and the requestIds that name them)
// and events (by age, and past the newest max_events). docs/retention.md.
//
// Every transaction deletes at most `batch_rows` rows of one kind (a job counts as one row; its
// logs and steps go with it), so an API write waits for the pruner at most one short transaction.
// After a pass that deleted anything, PRAGMA incremental_vacuum returns the free pages in chunks
// of `vacuum_pages` (schema v5 made the database auto_vacuum = INCREMENTAL).
// A retention of 0 keeps that kind forever.
//
// Threads: Start() runs a pass every interval_ms on the pruner's own thread; Stop() wakes it and
// joins (within the current transaction). PruneOnce() may be called from any thread (tests); two
// passes never overlap (pass_mu_). The store is borrowed and must outlive the pruner.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "base/status.h"
#include "db/retention_repository.h"
#include "db/store.h"

namespace tpuemu::service {

struct RetentionOptions {
  int64_t interval_ms = 60000;  // 0 = no background pass (tests call PruneOnce)
  int64_t jobs_seconds = 7 * 86400;
  int64_t job_logs_seconds = 7 * 86400;
  int64_t job_steps_seconds = 7 * 86400;
  int64_t operations_seconds = 7 * 86400;
  int64_t events_seconds = 7 * 86400;
  int64_t max_events = 100000;  // 0 = no limit
  int batch_rows = 500;
  int vacuum_pages = 256;
  std::function<int64_t()> now_ms;  // the clock; default the wall clock
};

// What one pass deleted, by kind, and the transactions it took.
struct PruneCounts {
  int64_t jobs = 0;
  int64_t job_log_lines = 0;
  int64_t job_steps = 0;
  int64_t operations = 0;
  int64_t request_ids = 0;
  int64_t events = 0;
  int64_t transactions = 0;
  int64_t max_rows_in_a_transaction = 0;
  int64_t Total() const {
    return jobs + job_log_lines + job_steps + operations + request_ids + events;
  }
};

class RetentionPruner {
 public:
  RetentionPruner(db::Store& store, RetentionOptions options);
  ~RetentionPruner();  // Stop()
  RetentionPruner(const RetentionPruner&) = delete;
  RetentionPruner& operator=(const RetentionPruner&) = delete;

  void Start();  // no-op when interval_ms is 0 or already started
  void Stop();   // idempotent
  // One pass now: every kind, then incremental vacuum if anything went. Errors: the store's.
  Result<PruneCounts> PruneOnce();

 private:
  void Loop();
  // Runs `one` (one bounded delete) in transactions until it deletes fewer than batch_rows.
  Result<int64_t> Drain(const std::function<Result<int64_t>(db::Txn&)>& one, PruneCounts& counts);

  db::Store& store_;
  const RetentionOptions options_;
  db::RetentionRepository retention_;

  std::mutex pass_mu_;  // one pass at a time
  // Finished jobs whose logs (steps) ended before this were pruned already (RFC 3339; "" = none):
  // the next pass looks only at jobs that ended since. Guarded by pass_mu_.
  std::string logs_done_before_;
  std::string steps_done_before_;

  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;  // guarded by mu_
  std::thread thread_;
};

}  // namespace tpuemu::service
