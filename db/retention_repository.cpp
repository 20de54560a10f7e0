#include "db/retention_repository.h"

#include <functional>
#include <string_view>

#include "db/statement_helpers.h"

namespace tpuemu::db {
namespace {

Result<int64_t> Run(Txn& txn, std::string_view sql, const std::function<void(Statement&)>& bind) {
  TPUEMU_PREPARE_OR_RETURN(stmt, txn.Prepare(sql));
  bind(stmt);
  TPUEMU_RETURN_IF_ERROR(stmt.Run());
  return txn.Changes();
}

}  // namespace

Result<int64_t> RetentionRepository::DeleteJobs(Txn& txn, const std::string& ended_before,
                                                int limit) const {
  // The names first: the logs and steps go by job, then the jobs (a trigger drops the programs).
  constexpr std::string_view kPick =
      "SELECT name FROM jobs WHERE end_time IS NOT NULL AND end_time < ?1 "
      "ORDER BY end_time LIMIT ?2";
  Result<int64_t> logs = Run(
      txn,
      "DELETE FROM job_logs WHERE job IN (SELECT name FROM (" + std::string(kPick) + ") AS picked)",
      [&](Statement& s) { s.Bind(1, ended_before).Bind(2, int64_t{limit}); });
  if (!logs.ok()) return logs.status();
  Result<int64_t> steps =
      Run(txn,
          "DELETE FROM job_steps WHERE job IN (SELECT name FROM (" + std::string(kPick) +
              ") AS picked)",
          [&](Statement& s) { s.Bind(1, ended_before).Bind(2, int64_t{limit}); });
  if (!steps.ok()) return steps.status();
  return Run(txn, "DELETE FROM jobs WHERE name IN (" + std::string(kPick) + ")",
             [&](Statement& s) { s.Bind(1, ended_before).Bind(2, int64_t{limit}); });
}

Result<int64_t> RetentionRepository::DeleteJobLogs(Txn& txn, const std::string& ended_from,
                                                   const std::string& ended_before,
                                                   int limit) const {
  return Run(
      txn,
      "DELETE FROM job_logs WHERE (job, line_no) IN (SELECT l.job, l.line_no FROM jobs j "
      "JOIN job_logs l ON l.job = j.name WHERE j.end_time IS NOT NULL AND "
      "j.end_time >= ?1 AND j.end_time < ?2 ORDER BY j.end_time LIMIT ?3)",
      [&](Statement& s) { s.Bind(1, ended_from).Bind(2, ended_before).Bind(3, int64_t{limit}); });
}

Result<int64_t> RetentionRepository::DeleteJobSteps(Txn& txn, const std::string& ended_from,
                                                    const std::string& ended_before,
                                                    int limit) const {
  return Run(
      txn,
      "DELETE FROM job_steps WHERE (job, step) IN (SELECT s.job, s.step FROM jobs j "
      "JOIN job_steps s ON s.job = j.name WHERE j.end_time IS NOT NULL AND "
      "j.end_time >= ?1 AND j.end_time < ?2 ORDER BY j.end_time LIMIT ?3)",
      [&](Statement& s) { s.Bind(1, ended_from).Bind(2, ended_before).Bind(3, int64_t{limit}); });
}

Result<int64_t> RetentionRepository::DeleteOperations(Txn& txn, const std::string& ended_before,
                                                      int limit) const {
  return Run(txn,
             "DELETE FROM operations WHERE seq IN (SELECT seq FROM operations WHERE done = 1 AND "
             "end_time IS NOT NULL AND end_time < ?1 ORDER BY end_time LIMIT ?2)",
             [&](Statement& s) { s.Bind(1, ended_before).Bind(2, int64_t{limit}); });
}

Result<int64_t> RetentionRepository::DeleteRequestIds(Txn& txn, int64_t recorded_before_unix_ms,
                                                      int limit) const {
  return Run(txn,
             "DELETE FROM request_ids WHERE (scope, request_id) IN (SELECT scope, request_id FROM "
             "request_ids WHERE time_unix_ms < ?1 LIMIT ?2)",
             [&](Statement& s) { s.Bind(1, recorded_before_unix_ms).Bind(2, int64_t{limit}); });
}

Result<int64_t> RetentionRepository::DeleteEvents(Txn& txn, int64_t before_unix_ms,
                                                  int limit) const {
  return Run(txn,
             "DELETE FROM events WHERE seq IN (SELECT seq FROM (SELECT seq, time_unix_ms FROM "
             "events ORDER BY seq LIMIT ?2) AS oldest WHERE time_unix_ms < ?1)",
             [&](Statement& s) { s.Bind(1, before_unix_ms).Bind(2, int64_t{limit}); });
}

Result<int64_t> RetentionRepository::DeleteEventsOverMax(Txn& txn, int64_t max_events,
                                                         int limit) const {
  // max(seq) - max_events bounds the count from above without counting (seq never repeats).
  return Run(txn,
             "DELETE FROM events WHERE seq IN (SELECT seq FROM events WHERE seq <= "
             "(SELECT max(seq) FROM events) - ?1 ORDER BY seq LIMIT ?2)",
             [&](Statement& s) { s.Bind(1, max_events).Bind(2, int64_t{limit}); });
}

Status RetentionRepository::IncrementalVacuum(int pages) const {
  return store_.ReclaimFreePages(pages);
}

Result<int64_t> RetentionRepository::FreePages() const { return store_.FreePages(); }

Result<int64_t> RetentionRepository::PageCount() const { return store_.PageCount(); }

}  // namespace tpuemu::db
