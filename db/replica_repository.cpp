#include "db/replica_repository.h"

#include <string>

#include "db/statement_helpers.h"

namespace tpuemu::db {

std::string_view ReplicaRepository::NowMs() const {
  return store_.backend() == Backend::kPostgres
             ? "CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT)"
             : "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)";
}

Status ReplicaRepository::Beat(Txn& txn, std::string_view id, std::string_view address,
                               bool starting) const {
  const std::string now(NowMs());
  TPUEMU_PREPARE_OR_RETURN(
      stmt,
      txn.Prepare(
          "INSERT INTO replicas (id, address, started_ms, heartbeat_ms) VALUES (?1, ?2, " + now +
          ", " + now +
          ") ON CONFLICT (id) DO UPDATE SET address = excluded.address, heartbeat_ms = "
          "excluded.heartbeat_ms, started_ms = CASE WHEN ?3 = 1 THEN excluded.started_ms ELSE "
          "replicas.started_ms END"));
  stmt.Bind(1, id).Bind(2, address).Bind(3, starting);
  return stmt.Run();
}

Result<std::vector<std::string>> ReplicaRepository::Expire(Txn& txn, int64_t lease_ms) const {
  TPUEMU_PREPARE_OR_RETURN(stmt, txn.Prepare("DELETE FROM replicas WHERE heartbeat_ms < " +
                                             std::string(NowMs()) + " - ?1 RETURNING id"));
  stmt.Bind(1, lease_ms);
  std::vector<std::string> ids;
  for (;;) {
    Result<bool> row = stmt.Step();
    if (!row.ok()) return row.status();
    if (!*row) return ids;
    ids.push_back(stmt.ColumnText(0));
  }
}

Status ReplicaRepository::RemoveOthers(Txn& txn, std::string_view id) const {
  TPUEMU_PREPARE_OR_RETURN(stmt, txn.Prepare("DELETE FROM replicas WHERE id <> ?1"));
  return stmt.Bind(1, id).Run();
}

Status ReplicaRepository::Remove(Txn& txn, std::string_view id) const {
  TPUEMU_PREPARE_OR_RETURN(stmt, txn.Prepare("DELETE FROM replicas WHERE id = ?1"));
  return stmt.Bind(1, id).Run();
}

Result<std::vector<ReplicaRow>> ReplicaRepository::List(int64_t* now_ms) const {
  return store_.ReadResult<std::vector<ReplicaRow>>(
      [&](Txn& txn) -> Result<std::vector<ReplicaRow>> {
        TPUEMU_PREPARE_OR_RETURN(stmt,
                                 txn.Prepare("SELECT id, address, started_ms, heartbeat_ms, " +
                                             std::string(NowMs()) + " FROM replicas ORDER BY id"));
        std::vector<ReplicaRow> rows;
        for (;;) {
          Result<bool> row = stmt.Step();
          if (!row.ok()) return row.status();
          if (!*row) return rows;
          Statement& s = stmt;
          rows.push_back({s.ColumnText(0), s.ColumnText(1), s.ColumnInt64(2), s.ColumnInt64(3)});
          if (now_ms) *now_ms = s.ColumnInt64(4);
        }
      });
}

}  // namespace tpuemu::db
