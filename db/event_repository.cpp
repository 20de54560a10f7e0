#include "db/event_repository.h"

#include "db/statement_helpers.h"

namespace tpuemu::db {

Result<int64_t> EventRepository::Append(Txn& txn, const EventRow& row) const {
  TPUEMU_PREPARE_OR_RETURN(
      stmt,
      txn.Prepare(
          "INSERT INTO events (project, time, time_unix_ms, kind, resource, zone, state, "
          "previous_state, message) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) RETURNING seq"));
  stmt.Bind(1, row.project)
      .Bind(2, row.time)
      .Bind(3, row.time_unix_ms)
      .Bind(4, row.kind)
      .Bind(5, row.resource)
      .Bind(6, row.zone)
      .Bind(7, row.state)
      .Bind(8, row.previous_state)
      .Bind(9, row.message);
  return InsertReturningSeq(stmt, /*kind=*/"", row.project, "INSERT INTO events returned no seq");
}

Result<std::vector<EventRow>> EventRepository::List(std::string_view project, int64_t after_seq,
                                                    int limit) const {
  return store_.ReadResult<std::vector<EventRow>>([&](Txn& txn) -> Result<std::vector<EventRow>> {
    TPUEMU_PREPARE_OR_RETURN(
        stmt,
        txn.Prepare(
            "SELECT seq, project, time, time_unix_ms, kind, resource, zone, state, previous_state, "
            "message FROM events WHERE project IN (?1, '*') AND seq > ?2 ORDER BY seq LIMIT ?3"));
    stmt.Bind(1, project).Bind(2, after_seq).Bind(3, static_cast<int64_t>(limit));
    std::vector<EventRow> rows;
    for (;;) {
      Result<bool> more = stmt.Step();
      if (!more.ok()) return more.status();
      if (!*more) return rows;
      const Statement& s = stmt;
      EventRow row;
      row.seq = s.ColumnInt64(0);
      row.project = s.ColumnText(1);
      row.time = s.ColumnText(2);
      row.time_unix_ms = s.ColumnInt64(3);
      row.kind = s.ColumnText(4);
      row.resource = s.ColumnText(5);
      row.zone = s.ColumnText(6);
      row.state = s.ColumnText(7);
      row.previous_state = s.ColumnOptionalText(8);
      row.message = s.ColumnText(9);
      rows.push_back(std::move(row));
    }
  });
}

Result<int64_t> EventRepository::Prune(Txn& txn, int64_t max_rows, int64_t min_time_unix_ms) const {
  int64_t removed = 0;
  {
    TPUEMU_PREPARE_OR_RETURN(
        stmt,
        txn.Prepare("DELETE FROM events WHERE seq <= (SELECT seq FROM events ORDER BY seq DESC "
                    "LIMIT 1 OFFSET ?1)"));
    stmt.Bind(1, max_rows);
    TPUEMU_RETURN_IF_ERROR(stmt.Run());
    removed += txn.Changes();
  }
  TPUEMU_PREPARE_OR_RETURN(stmt, txn.Prepare("DELETE FROM events WHERE time_unix_ms < ?1"));
  stmt.Bind(1, min_time_unix_ms);
  TPUEMU_RETURN_IF_ERROR(stmt.Run());
  removed += txn.Changes();
  return removed;
}

}  // namespace tpuemu::db
