#include "db/queued_resource_repository.h"

#include "db/list_queries.h"
#include "db/statement_helpers.h"

namespace tpuemu::db {
namespace {

#define TPUEMU_QR_INSERT_COLUMNS                                                            \
  "name, project, zone, queued_resource_id, state, tensorcores, reservation, create_time, " \
  "update_time, resource_json, pending_operation, due_ms, held_tensorcores"
#define TPUEMU_QR_COLUMNS TPUEMU_QR_INSERT_COLUMNS ", seq"

QueuedResourceRow ReadQueuedResourceRow(const Statement& s) {
  QueuedResourceRow row;
  row.name = s.ColumnText(0);
  row.project = s.ColumnText(1);
  row.zone = s.ColumnText(2);
  row.queued_resource_id = s.ColumnText(3);
  row.state = s.ColumnText(4);
  row.tensorcores = s.ColumnInt64(5);
  row.reservation = s.ColumnOptionalText(6);
  row.create_time = s.ColumnText(7);
  row.update_time = s.ColumnText(8);
  row.resource_json = s.ColumnText(9);
  row.pending_operation = s.ColumnOptionalText(10);
  row.due_ms = s.ColumnOptionalInt64(11);
  row.held_tensorcores = s.ColumnInt64(12);
  row.seq = s.ColumnInt64(13);
  return row;
}

// Binds ?2..?13 (every column but name and seq).
void BindBody(Statement& s, const QueuedResourceRow& row) {
  s.Bind(2, row.project)
      .Bind(3, row.zone)
      .Bind(4, row.queued_resource_id)
      .Bind(5, row.state)
      .Bind(6, row.tensorcores)
      .Bind(7, row.reservation)
      .Bind(8, row.create_time)
      .Bind(9, row.update_time)
      .Bind(10, row.resource_json)
      .Bind(11, row.pending_operation)
      .Bind(12, row.due_ms)
      .Bind(13, row.held_tensorcores);
}

Result<std::vector<QueuedResourceRow>> CollectQueuedResourceRows(Statement& s) {
  std::vector<QueuedResourceRow> rows;
  for (;;) {
    Result<bool> more = s.Step();
    if (!more.ok()) return more.status();
    if (!*more) return rows;
    rows.push_back(ReadQueuedResourceRow(s));
  }
}

Result<int64_t> SumOne(Txn& txn, const char* sql, std::string_view param) {
  TPUEMU_PREPARE_OR_RETURN(stmt, txn.Prepare(sql));
  stmt.Bind(1, param);
  Result<bool> row = stmt.Step();
  if (!row.ok()) return row.status();
  return *row ? stmt.ColumnInt64(0) : int64_t{0};
}

Status MissingQueuedResource(std::string_view name) {
  return Status::NotFound("queued resource '" + std::string(name) + "' not found");
}

}  // namespace

Result<int64_t> QueuedResourceRepository::Insert(Txn& txn, const QueuedResourceRow& row) const {
  TPUEMU_PREPARE_OR_RETURN(
      s, txn.Prepare(
             "INSERT INTO queued_resources (" TPUEMU_QR_INSERT_COLUMNS
             ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13) RETURNING seq"));
  s.Bind(1, row.name);
  BindBody(s, row);
  return InsertReturningSeq(s, "queued resource", row.name);
}

Status QueuedResourceRepository::Update(Txn& txn, const QueuedResourceRow& row) const {
  TPUEMU_PREPARE_OR_RETURN(
      s, txn.Prepare(
             "UPDATE queued_resources SET project = ?2, zone = ?3, queued_resource_id = ?4, state "
             "= ?5, "
             "tensorcores = ?6, reservation = ?7, create_time = ?8, update_time = ?9, "
             "resource_json = ?10, pending_operation = ?11, due_ms = ?12, held_tensorcores = ?13 "
             "WHERE name = ?1"));
  s.Bind(1, row.name);
  BindBody(s, row);
  TPUEMU_RETURN_IF_ERROR(s.Run());
  if (txn.Changes() == 0) return MissingQueuedResource(row.name);
  return Status::Ok();
}

Status QueuedResourceRepository::Delete(Txn& txn, std::string_view name) const {
  TPUEMU_PREPARE_OR_RETURN(stmt, txn.Prepare("DELETE FROM queued_resources WHERE name = ?1"));
  stmt.Bind(1, name);
  TPUEMU_RETURN_IF_ERROR(stmt.Run());
  if (txn.Changes() == 0) return MissingQueuedResource(name);
  return Status::Ok();
}

Result<QueuedResourceRow> QueuedResourceRepository::Get(Txn& txn, std::string_view name) const {
  TPUEMU_PREPARE_OR_RETURN(
      stmt, txn.Prepare("SELECT " TPUEMU_QR_COLUMNS " FROM queued_resources WHERE name = ?1"));
  stmt.Bind(1, name);
  Result<bool> row = stmt.Step();
  if (!row.ok()) return row.status();
  if (!*row) return MissingQueuedResource(name);
  return ReadQueuedResourceRow(stmt);
}

Result<QueuedResourceRow> QueuedResourceRepository::Get(std::string_view name) const {
  return store_.ReadResult<QueuedResourceRow>([&](Txn& txn) { return Get(txn, name); });
}

Result<std::vector<QueuedResourceRow>> QueuedResourceRepository::List(std::string_view project,
                                                                      std::string_view zone,
                                                                      int64_t after_seq,
                                                                      int limit) const {
  return store_.ReadResult<std::vector<QueuedResourceRow>>(
      [&](Txn& txn) -> Result<std::vector<QueuedResourceRow>> {
        const bool all_zones = zone == kAllZones;
        TPUEMU_PREPARE_OR_RETURN(
            s, all_zones
                   ? txn.Prepare("SELECT " TPUEMU_QR_COLUMNS TPUEMU_QUEUED_RESOURCES_IN_PROJECT)
                   : txn.Prepare("SELECT " TPUEMU_QR_COLUMNS TPUEMU_QUEUED_RESOURCES_IN_LOCATION));
        s.Bind(1, project).Bind(3, after_seq).Bind(4, limit > 0 ? int64_t{limit} : kNoLimit);
        if (!all_zones) s.Bind(2, zone);
        return CollectQueuedResourceRows(s);
      });
}

Result<std::vector<QueuedResourceRow>> QueuedResourceRepository::ListInZone(
    Txn& txn, std::string_view zone) const {
  const bool all_zones = zone == kAllZones;
  TPUEMU_PREPARE_OR_RETURN(
      stmt, all_zones
                ? txn.Prepare("SELECT " TPUEMU_QR_COLUMNS " FROM queued_resources ORDER BY seq")
                : txn.Prepare("SELECT " TPUEMU_QR_COLUMNS TPUEMU_QUEUED_RESOURCES_IN_ZONE));
  if (!all_zones) stmt.Bind(1, zone);
  return CollectQueuedResourceRows(stmt);
}

Result<std::vector<QueuedResourceRow>> QueuedResourceRepository::ListInZone(
    std::string_view zone) const {
  return store_.ReadResult<std::vector<QueuedResourceRow>>(
      [&](Txn& txn) { return ListInZone(txn, zone); });
}

Result<std::vector<QueuedResourceRow>> QueuedResourceRepository::ListInReservation(
    Txn& txn, std::string_view reservation) const {
  TPUEMU_PREPARE_OR_RETURN(
      stmt, txn.Prepare("SELECT " TPUEMU_QR_COLUMNS TPUEMU_QUEUED_RESOURCES_IN_RESERVATION));
  stmt.Bind(1, reservation);
  return CollectQueuedResourceRows(stmt);
}

Result<int64_t> QueuedResourceRepository::SumTensorCores(Txn& txn, std::string_view project) const {
  // The counter the schema's triggers keep (schema v6), not a scan of the project's rows.
  return SumOne(txn, "SELECT queued_resources FROM project_tensorcores WHERE project = ?1",
                project);
}

Result<int64_t> QueuedResourceRepository::SumHeldInZone(Txn& txn, std::string_view zone) const {
  return SumOne(txn, "SELECT queued_resources FROM zone_tensorcores WHERE zone = ?1", zone);
}

}  // namespace tpuemu::db
