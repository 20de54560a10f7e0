#include "db/operation_repository.h"

#include "db/list_queries.h"
#include "db/statement_helpers.h"

#include <string>

namespace tpuemu::db {
namespace {

// Column order shared by every SELECT below and by ReadRow.
// Every column but seq, which INSERT leaves to AUTOINCREMENT.
#define TPUEMU_OPERATION_INSERT_COLUMNS                                                \
  "name, project, zone, target, verb, create_time, end_time, done, cancel_requested, " \
  "error_code, error_message, response_json"
#define TPUEMU_OPERATION_COLUMNS TPUEMU_OPERATION_INSERT_COLUMNS ", seq"

OperationRow ReadOperationRow(const Statement& s) {
  OperationRow row;
  row.name = s.ColumnText(0);
  row.project = s.ColumnText(1);
  row.zone = s.ColumnText(2);
  row.target = s.ColumnText(3);
  row.verb = s.ColumnText(4);
  row.create_time = s.ColumnText(5);
  row.end_time = s.ColumnOptionalText(6);
  row.done = s.ColumnInt64(7) != 0;
  row.cancel_requested = s.ColumnInt64(8) != 0;
  if (std::optional<int64_t> code = s.ColumnOptionalInt64(9)) {
    row.error_code = static_cast<int32_t>(*code);
  }
  row.error_message = s.ColumnOptionalText(10);
  row.response_json = s.ColumnOptionalText(11);
  row.seq = s.ColumnInt64(12);
  return row;
}

// Binds ?2..?12 (every column but name and seq) in table order.
void BindBody(Statement& s, const OperationRow& row) {
  s.Bind(2, row.project)
      .Bind(3, row.zone)
      .Bind(4, row.target)
      .Bind(5, row.verb)
      .Bind(6, row.create_time)
      .Bind(7, row.end_time)
      .Bind(8, row.done)
      .Bind(9, row.cancel_requested)
      .Bind(10, row.error_code)
      .Bind(11, row.error_message)
      .Bind(12, row.response_json);
}

}  // namespace

Result<int64_t> OperationRepository::Insert(Txn& txn, const OperationRow& row) const {
  TPUEMU_PREPARE_OR_RETURN(
      s, txn.Prepare("INSERT INTO operations (" TPUEMU_OPERATION_INSERT_COLUMNS
                     ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12) RETURNING seq"));
  s.Bind(1, row.name);
  BindBody(s, row);
  return InsertReturningSeq(s, "operation", row.name);
}

Status OperationRepository::Update(Txn& txn, const OperationRow& row) const {
  TPUEMU_PREPARE_OR_RETURN(
      s,
      txn.Prepare(
          "UPDATE operations SET project = ?2, zone = ?3, target = ?4, verb = ?5, create_time = "
          "?6, "
          "end_time = ?7, done = ?8, cancel_requested = ?9, error_code = ?10, error_message = ?11, "
          "response_json = ?12 WHERE name = ?1"));
  s.Bind(1, row.name);
  BindBody(s, row);
  TPUEMU_RETURN_IF_ERROR(s.Run());
  if (txn.Changes() == 0) return Status::NotFound("operation '" + row.name + "' not found");
  return Status::Ok();
}

Status OperationRepository::Delete(Txn& txn, std::string_view name) const {
  TPUEMU_PREPARE_OR_RETURN(stmt, txn.Prepare("DELETE FROM operations WHERE name = ?1"));
  stmt.Bind(1, name);
  TPUEMU_RETURN_IF_ERROR(stmt.Run());
  if (txn.Changes() == 0) {
    return Status::NotFound("operation '" + std::string(name) + "' not found");
  }
  return Status::Ok();
}

Result<OperationRow> OperationRepository::Get(Txn& txn, std::string_view name) const {
  TPUEMU_PREPARE_OR_RETURN(
      stmt, txn.Prepare("SELECT " TPUEMU_OPERATION_COLUMNS " FROM operations WHERE name = ?1"));
  stmt.Bind(1, name);
  Result<bool> row = stmt.Step();
  if (!row.ok()) return row.status();
  if (!*row) return Status::NotFound("operation '" + std::string(name) + "' not found");
  return ReadOperationRow(stmt);
}

Result<OperationRow> OperationRepository::Get(std::string_view name) const {
  return store_.ReadResult<OperationRow>([&](Txn& txn) { return Get(txn, name); });
}

Result<std::vector<OperationRow>> OperationRepository::List(Txn& txn, std::string_view project,
                                                            std::string_view zone,
                                                            int64_t after_seq, int limit) const {
  // Two texts so the one-zone case seeks the (project, zone, seq) index in seq order.
  const bool all_zones = zone == kAllZones;
  TPUEMU_PREPARE_OR_RETURN(
      s, all_zones ? txn.Prepare("SELECT " TPUEMU_OPERATION_COLUMNS TPUEMU_OPERATIONS_IN_PROJECT)
                   : txn.Prepare("SELECT " TPUEMU_OPERATION_COLUMNS TPUEMU_OPERATIONS_IN_LOCATION));
  s.Bind(1, project).Bind(3, after_seq).Bind(4, limit > 0 ? int64_t{limit} : kNoLimit);
  if (!all_zones) s.Bind(2, zone);
  std::vector<OperationRow> rows;
  for (;;) {
    Result<bool> more = s.Step();
    if (!more.ok()) return more.status();
    if (!*more) return rows;
    rows.push_back(ReadOperationRow(s));
  }
}

Result<std::vector<OperationRow>> OperationRepository::List(std::string_view project,
                                                            std::string_view zone,
                                                            int64_t after_seq, int limit) const {
  return store_.ReadResult<std::vector<OperationRow>>(
      [&](Txn& txn) { return List(txn, project, zone, after_seq, limit); });
}

}  // namespace tpuemu::db
