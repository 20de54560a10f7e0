#include "db/job_repository.h"

#include <algorithm>
#include <string>

#include "db/list_queries.h"
#include "db/statement_helpers.h"

namespace tpuemu::db {
namespace {

#define TPUEMU_JOB_INSERT_COLUMNS                                                              \
  "name, project, zone, node_id, job_id, state, priority, labels_json, spec_json, "            \
  "request_id, spec_hash, create_time, start_time, end_time, exit_code, reason, result_json, " \
  "attempt, max_retries, owner"
#define TPUEMU_JOB_COLUMNS TPUEMU_JOB_INSERT_COLUMNS ", seq"

JobRow ReadJobRow(const Statement& s) {
  JobRow row;
  row.name = s.ColumnText(0);
  row.project = s.ColumnText(1);
  row.zone = s.ColumnText(2);
  row.node_id = s.ColumnText(3);
  row.job_id = s.ColumnText(4);
  row.state = s.ColumnText(5);
  row.priority = s.ColumnInt64(6);
  row.labels_json = s.ColumnText(7);
  row.spec_json = s.ColumnText(8);
  row.request_id = s.ColumnOptionalText(9);
  row.spec_hash = s.ColumnText(10);
  row.create_time = s.ColumnText(11);
  row.start_time = s.ColumnOptionalText(12);
  row.end_time = s.ColumnOptionalText(13);
  row.exit_code = s.ColumnOptionalInt64(14);
  row.reason = s.ColumnOptionalText(15);
  row.result_json = s.ColumnOptionalText(16);
  row.attempt = s.ColumnInt64(17);
  row.max_retries = s.ColumnInt64(18);
  row.owner = s.ColumnOptionalText(19);
  row.seq = s.ColumnInt64(20);
  return row;
}

void BindRow(Statement& s, const JobRow& row) {
  s.Bind(1, row.name)
      .Bind(2, row.project)
      .Bind(3, row.zone)
      .Bind(4, row.node_id)
      .Bind(5, row.job_id)
      .Bind(6, row.state)
      .Bind(7, row.priority)
      .Bind(8, row.labels_json)
      .Bind(9, row.spec_json)
      .Bind(10, row.request_id)
      .Bind(11, row.spec_hash)
      .Bind(12, row.create_time)
      .Bind(13, row.start_time)
      .Bind(14, row.end_time)
      .Bind(15, row.exit_code)
      .Bind(16, row.reason)
      .Bind(17, row.result_json)
      .Bind(18, row.attempt)
      .Bind(19, row.max_retries)
      .Bind(20, row.owner);
}

Result<std::vector<JobRow>> CollectJobRows(Statement& s) {
  std::vector<JobRow> rows;
  for (;;) {
    Result<bool> more = s.Step();
    if (!more.ok()) return more.status();
    if (!*more) return rows;
    rows.push_back(ReadJobRow(s));
  }
}

// The first row's name of `sql`, whose ?1..?3 are a node's project, zone and node id.
Result<std::optional<std::string>> FirstNameOnNode(Txn& txn, const char* sql,
                                                   std::string_view project, std::string_view zone,
                                                   std::string_view node_id) {
  TPUEMU_PREPARE_OR_RETURN(stmt, txn.Prepare(sql));
  stmt.Bind(1, project).Bind(2, zone).Bind(3, node_id);
  Result<bool> row = stmt.Step();
  if (!row.ok()) return row.status();
  if (!*row) return std::optional<std::string>();
  return std::optional<std::string>(stmt.ColumnText(0));
}

Status NotFound(std::string_view name) {
  return Status::NotFound("job '" + std::string(name) + "' not found");
}

}  // namespace

Result<int64_t> JobRepository::Insert(Txn& txn, const JobRow& row) const {
  TPUEMU_PREPARE_OR_RETURN(s, txn.Prepare("INSERT INTO jobs (" TPUEMU_JOB_INSERT_COLUMNS
                                          ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, "
                                          "?12, ?13, ?14, ?15, ?16, ?17, ?18, "
                                          "?19, ?20) RETURNING seq"));
  BindRow(s, row);
  return InsertReturningSeq(s, "job", row.name, "insert job: RETURNING produced no row");
}

Status JobRepository::Update(Txn& txn, const JobRow& row) const {
  // Only the columns a run changes: SQLite rewrites an index on UPDATE when the SET names one of
  // its columns, whatever the value, and the identity and spec columns feed four of the jobs
  // indexes (by node, request, location, project) that no transition moves. A tiny job makes
  // three of these updates (bench_jobs, issue 44).
  TPUEMU_PREPARE_OR_RETURN(
      stmt,
      txn.Prepare("UPDATE jobs SET state = ?2, start_time = ?3, end_time = ?4, exit_code = ?5, "
                  "reason = ?6, result_json = ?7, attempt = ?8, owner = ?9 WHERE name = ?1"));
  stmt.Bind(1, row.name)
      .Bind(2, row.state)
      .Bind(3, row.start_time)
      .Bind(4, row.end_time)
      .Bind(5, row.exit_code)
      .Bind(6, row.reason)
      .Bind(7, row.result_json)
      .Bind(8, row.attempt)
      .Bind(9, row.owner);
  TPUEMU_RETURN_IF_ERROR(stmt.Run());
  if (txn.Changes() == 0) return NotFound(row.name);
  return Status::Ok();
}

Status JobRepository::Delete(Txn& txn, std::string_view name) const {
  TPUEMU_RETURN_IF_ERROR(ClearOutputs(txn, name));
  TPUEMU_PREPARE_OR_RETURN(stmt, txn.Prepare("DELETE FROM jobs WHERE name = ?1"));
  stmt.Bind(1, name);
  TPUEMU_RETURN_IF_ERROR(stmt.Run());
  if (txn.Changes() == 0) return NotFound(name);
  return Status::Ok();
}

Result<JobRow> JobRepository::Get(Txn& txn, std::string_view name) const {
  TPUEMU_PREPARE_OR_RETURN(stmt,
                           txn.Prepare("SELECT " TPUEMU_JOB_COLUMNS " FROM jobs WHERE name = ?1"));
  stmt.Bind(1, name);
  Result<bool> row = stmt.Step();
  if (!row.ok()) return row.status();
  if (!*row) return NotFound(name);
  return ReadJobRow(stmt);
}

Result<JobRow> JobRepository::Get(std::string_view name) const {
  return store_.ReadResult<JobRow>([&](Txn& txn) { return Get(txn, name); });
}

Result<JobRow> JobRepository::GetByRequestId(Txn& txn, std::string_view project,
                                             std::string_view zone, std::string_view node_id,
                                             std::string_view request_id) const {
  TPUEMU_PREPARE_OR_RETURN(
      stmt,
      txn.Prepare(
          "SELECT " TPUEMU_JOB_COLUMNS
          " FROM jobs WHERE project = ?1 AND zone = ?2 AND node_id = ?3 AND request_id = ?4"));
  stmt.Bind(1, project).Bind(2, zone).Bind(3, node_id).Bind(4, request_id);
  Result<bool> row = stmt.Step();
  if (!row.ok()) return row.status();
  if (!*row) return Status::NotFound("no job with request id '" + std::string(request_id) + "'");
  return ReadJobRow(stmt);
}

std::string JobRepository::ListSql(const JobFilter& filter) {
  std::string sql = " FROM jobs WHERE seq > ?5";
  if (!filter.project.empty()) sql += " AND project = ?1";
  if (!filter.zone.empty() && filter.zone != "-") sql += " AND zone = ?2";
  if (!filter.node_id.empty()) sql += " AND node_id = ?3";
  if (!filter.state.empty()) sql += " AND state = ?4";
  return sql + " ORDER BY seq LIMIT ?6";
}

Result<std::vector<JobRow>> JobRepository::List(const JobFilter& filter, int64_t after_seq,
                                                int limit) const {
  return store_.ReadResult<std::vector<JobRow>>([&](Txn& txn) -> Result<std::vector<JobRow>> {
    // Only the filters that are set go into the SQL, so the planner can walk the index that
    // matches them (jobs_by_node, jobs_by_location, jobs_by_project, jobs_by_state) in seq order
    // from the page token: "?x = '' OR column = ?x" would defeat every index.
    const bool all_zones = filter.zone.empty() || filter.zone == "-";
    TPUEMU_PREPARE_OR_RETURN(s, txn.Prepare("SELECT " TPUEMU_JOB_COLUMNS + ListSql(filter)));
    if (!filter.project.empty()) s.Bind(1, filter.project);
    if (!all_zones) s.Bind(2, filter.zone);
    if (!filter.node_id.empty()) s.Bind(3, filter.node_id);
    if (!filter.state.empty()) s.Bind(4, filter.state);
    s.Bind(5, after_seq).Bind(6, limit > 0 ? int64_t{limit} : kNoLimit);
    return CollectJobRows(s);
  });
}

Result<std::vector<JobRow>> JobRepository::AdoptOrphans(
    Txn& txn, std::string_view owner, bool include_own,
    std::map<std::string, std::string>* previous_owner) const {
  if (previous_owner != nullptr) {
    // The owners before the UPDATE (RETURNING shows only the new one); on PostgreSQL the rows
    // are locked, so the UPDATE below takes exactly these.
    TPUEMU_PREPARE_OR_RETURN(
        before,
        txn.Prepare(
            std::string("SELECT name, owner FROM jobs WHERE state IN ('QUEUED', 'RUNNING') AND "
                        "(owner IS NULL OR owner NOT IN (SELECT id FROM replicas)) AND "
                        "(owner IS NULL OR owner <> ?1)") +
            (store_.backend() == Backend::kPostgres ? " FOR UPDATE" : "")));
    before.Bind(1, owner);
    for (;;) {
      Result<bool> row = before.Step();
      if (!row.ok()) return row.status();
      if (!*row) break;
      (*previous_owner)[before.ColumnText(0)] =
          before.IsNull(1) ? std::string() : before.ColumnText(1);
    }
  }
  TPUEMU_PREPARE_OR_RETURN(
      stmt,
      txn.Prepare(
          "UPDATE jobs SET owner = ?1 WHERE state IN ('QUEUED', 'RUNNING') AND (owner IS NULL OR "
          "owner NOT IN (SELECT id FROM replicas)) AND (owner IS NULL OR owner <> ?1) "
          "RETURNING " TPUEMU_JOB_COLUMNS));
  stmt.Bind(1, owner);
  Result<std::vector<JobRow>> rows = CollectJobRows(stmt);
  if (!rows.ok() || !include_own) {
    if (rows.ok()) {
      std::sort(rows->begin(), rows->end(),
                [](const JobRow& a, const JobRow& b) { return a.seq < b.seq; });
    }
    return rows;
  }
  TPUEMU_PREPARE_OR_RETURN(
      own,
      txn.Prepare("SELECT " TPUEMU_JOB_COLUMNS
                  " FROM jobs WHERE state IN ('QUEUED', 'RUNNING') AND owner = ?1 ORDER BY seq"));
  own.Bind(1, owner);
  return CollectJobRows(own);  // the adopted jobs are among them now
}

Result<std::optional<std::string>> JobRepository::RunningOnNode(Txn& txn, std::string_view project,
                                                                std::string_view zone,
                                                                std::string_view node_id) const {
  return FirstNameOnNode(txn,
                         "SELECT name FROM jobs WHERE project = ?1 AND zone = ?2 AND node_id = ?3 "
                         "AND state = 'RUNNING' LIMIT 1",
                         project, zone, node_id);
}

Result<std::optional<std::string>> JobRepository::NextQueuedOnNode(Txn& txn,
                                                                   std::string_view project,
                                                                   std::string_view zone,
                                                                   std::string_view node_id) const {
  return FirstNameOnNode(txn,
                         "SELECT name FROM jobs WHERE project = ?1 AND zone = ?2 AND node_id = ?3 "
                         "AND state = 'QUEUED' ORDER BY priority DESC, seq LIMIT 1",
                         project, zone, node_id);
}

Result<std::pair<std::string, std::optional<std::string>>> JobRepository::StateAndOwner(
    Txn& txn, std::string_view name) const {
  TPUEMU_PREPARE_OR_RETURN(stmt, txn.Prepare("SELECT state, owner FROM jobs WHERE name = ?1"));
  stmt.Bind(1, name);
  Result<bool> row = stmt.Step();
  if (!row.ok()) return row.status();
  if (!*row) return NotFound(name);
  return std::make_pair(stmt.ColumnText(0), stmt.ColumnOptionalText(1));
}

Result<JobRow> JobRepository::LockQueued(Txn& txn, std::string_view name) const {
  // On PostgreSQL the row is locked until the transaction ends and a replica that finds it locked
  // skips it at once instead of waiting; SQLite has one writer, so its plain read is the same.
  TPUEMU_PREPARE_OR_RETURN(
      stmt,
      txn.Prepare(store_.backend() == Backend::kPostgres
                      ? "SELECT " TPUEMU_JOB_COLUMNS
                        " FROM jobs WHERE name = ?1 AND state = 'QUEUED' FOR UPDATE SKIP LOCKED"
                      : "SELECT " TPUEMU_JOB_COLUMNS
                        " FROM jobs WHERE name = ?1 AND state = 'QUEUED'"));
  stmt.Bind(1, name);
  Result<bool> row = stmt.Step();
  if (!row.ok()) return row.status();
  if (!*row) return NotFound(name);
  return ReadJobRow(stmt);
}

Result<std::vector<JobRow>> JobRepository::ListInState(std::string_view state) const {
  JobFilter filter;
  filter.state = std::string(state);
  return List(filter, 0, 0);
}

Status JobRepository::AppendLog(Txn& txn, std::string_view job, std::string_view text) const {
  TPUEMU_PREPARE_OR_RETURN(stmt,
                           txn.Prepare("INSERT INTO job_logs (job, line_no, text) VALUES (?1, "
                                       "(SELECT COUNT(*) FROM job_logs WHERE job = ?1), ?2)"));
  stmt.Bind(1, job).Bind(2, text);
  return stmt.Run();
}

Status JobRepository::AppendStep(Txn& txn, std::string_view job, const JobStepRow& step) const {
  TPUEMU_PREPARE_OR_RETURN(
      s,
      txn.Prepare(
          "INSERT INTO job_steps (job, step, loss, cycles, emulated_seconds, mxu_utilization, "
          "flops, "
          "host_seconds) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT (job, step) DO UPDATE "
          "SET loss = excluded.loss, cycles = excluded.cycles, "
          "emulated_seconds = excluded.emulated_seconds, mxu_utilization = "
          "excluded.mxu_utilization, "
          "flops = excluded.flops, host_seconds = excluded.host_seconds"));
  s.Bind(1, job).Bind(2, step.step).Bind(4, step.cycles);
  if (step.loss) {
    s.BindReal(3, *step.loss);
  } else {
    s.BindNull(3);
  }
  s.BindReal(5, step.emulated_seconds)
      .BindReal(6, step.mxu_utilization)
      .BindReal(7, step.flops)
      .BindReal(8, step.host_seconds);
  return s.Run();
}

Status JobRepository::ClearOutputs(Txn& txn, std::string_view job) const {
  for (const char* sql :
       {"DELETE FROM job_logs WHERE job = ?1", "DELETE FROM job_steps WHERE job = ?1"}) {
    TPUEMU_PREPARE_OR_RETURN(stmt, txn.Prepare(sql));
    stmt.Bind(1, job);
    TPUEMU_RETURN_IF_ERROR(stmt.Run());
  }
  return Status::Ok();
}

Result<std::vector<std::string>> JobRepository::Logs(std::string_view job, int64_t offset) const {
  return store_.ReadResult<std::vector<std::string>>([&](Txn& txn)
                                                         -> Result<std::vector<std::string>> {
    TPUEMU_PREPARE_OR_RETURN(
        stmt,
        txn.Prepare("SELECT text FROM job_logs WHERE job = ?1 AND line_no >= ?2 ORDER BY line_no"));
    stmt.Bind(1, job).Bind(2, offset);
    std::vector<std::string> lines;
    for (;;) {
      Result<bool> more = stmt.Step();
      if (!more.ok()) return more.status();
      if (!*more) return lines;
      lines.push_back(stmt.ColumnText(0));
    }
  });
}

Result<std::vector<JobStepRow>> JobRepository::Steps(std::string_view job) const {
  return store_.ReadResult<std::vector<JobStepRow>>(
      [&](Txn& txn) -> Result<std::vector<JobStepRow>> {
        TPUEMU_PREPARE_OR_RETURN(
            stmt,
            txn.Prepare(
                "SELECT step, loss, cycles, emulated_seconds, mxu_utilization, flops, host_seconds "
                "FROM job_steps WHERE job = ?1 ORDER BY step"));
        stmt.Bind(1, job);
        std::vector<JobStepRow> steps;
        for (;;) {
          Result<bool> more = stmt.Step();
          if (!more.ok()) return more.status();
          if (!*more) return steps;
          const Statement& s = stmt;
          JobStepRow row;
          row.step = s.ColumnInt64(0);
          if (!s.IsNull(1)) row.loss = s.ColumnReal(1);
          row.cycles = s.ColumnInt64(2);
          row.emulated_seconds = s.ColumnReal(3);
          row.mxu_utilization = s.ColumnReal(4);
          row.flops = s.ColumnReal(5);
          row.host_seconds = s.ColumnReal(6);
          steps.push_back(row);
        }
      });
}

}  // namespace tpuemu::db
