#include "db/request_id_repository.h"

#include "db/statement_helpers.h"

namespace tpuemu::db {

Status RequestIdRepository::Insert(Txn& txn, const RequestIdRow& row) const {
  TPUEMU_PREPARE_OR_RETURN(
      stmt,
      txn.Prepare(
          "INSERT INTO request_ids (scope, request_id, verb, target, operation, time_unix_ms) "
          "VALUES (?1, ?2, ?3, ?4, ?5, ?6)"));
  stmt.Bind(1, row.scope)
      .Bind(2, row.request_id)
      .Bind(3, row.verb)
      .Bind(4, row.target)
      .Bind(5, row.operation)
      .Bind(6, row.time_unix_ms);
  return stmt.Run();
}

Result<RequestIdRow> RequestIdRepository::Get(Txn& txn, std::string_view scope,
                                              std::string_view request_id) const {
  TPUEMU_PREPARE_OR_RETURN(
      stmt, txn.Prepare(
                "SELECT scope, request_id, verb, target, operation, time_unix_ms FROM request_ids "
                "WHERE scope = ?1 AND request_id = ?2"));
  stmt.Bind(1, scope).Bind(2, request_id);
  Result<bool> row = stmt.Step();
  if (!row.ok()) return row.status();
  if (!*row) return Status::NotFound("request id '" + std::string(request_id) + "' not found");
  const Statement& s = stmt;
  return RequestIdRow{s.ColumnText(0), s.ColumnText(1), s.ColumnText(2),
                      s.ColumnText(3), s.ColumnText(4), s.ColumnInt64(5)};
}

}  // namespace tpuemu::db
