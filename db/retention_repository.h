// RetentionRepository: the bounded deletes behind retention (service/retention/): each call
// deletes at most `limit` rows of one kind, oldest first, so a caller can keep every transaction
// short, and returns how many went. Times: jobs and operations compare their RFC 3339 end_time
// text (one fixed format, so text order is time order); events their time_unix_ms.
//
// Holds only the Store reference (not owned; must outlive the repository): as thread-safe as the
// Store. Errors: whatever the Store reports.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"
#include "db/store.h"

namespace tpuemu::db {

class RetentionRepository {
 public:
  explicit RetentionRepository(Store& store) : store_(store) {}

  // Terminal jobs (end_time set) that ended before `ended_before`, with their log lines, step
  // rows and program rows. `limit` counts jobs.
  Result<int64_t> DeleteJobs(Txn& txn, const std::string& ended_before, int limit) const;
  // Log lines (or step rows) of the jobs that ended in [ended_from, ended_before); the job stays.
  Result<int64_t> DeleteJobLogs(Txn& txn, const std::string& ended_from,
                                const std::string& ended_before, int limit) const;
  Result<int64_t> DeleteJobSteps(Txn& txn, const std::string& ended_from,
                                 const std::string& ended_before, int limit) const;
  // Done operations that ended before `ended_before`, and the requestIds recorded before
  // `recorded_before_unix_ms` (they name operations).
  Result<int64_t> DeleteOperations(Txn& txn, const std::string& ended_before, int limit) const;
  Result<int64_t> DeleteRequestIds(Txn& txn, int64_t recorded_before_unix_ms, int limit) const;
  // Events older than `before_unix_ms`, looking only at the `limit` oldest (seq order is time
  // order), then events past the newest `max_events`.
  Result<int64_t> DeleteEvents(Txn& txn, int64_t before_unix_ms, int limit) const;
  Result<int64_t> DeleteEventsOverMax(Txn& txn, int64_t max_events, int limit) const;
  // Gives up to `pages` free pages back to the file system (PRAGMA incremental_vacuum, in a short
  // transaction of its own; a no-op unless auto_vacuum is INCREMENTAL, schema v5).
  Status IncrementalVacuum(int pages) const;
  // PRAGMA freelist_count / page_count.
  Result<int64_t> FreePages() const;
  Result<int64_t> PageCount() const;

 private:
  Store& store_;
};

}  // namespace tpuemu::db
