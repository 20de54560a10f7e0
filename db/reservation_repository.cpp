#include "db/reservation_repository.h"

#include "db/list_queries.h"
#include "db/statement_helpers.h"

namespace tpuemu::db {
namespace {

#define TPUEMU_RESERVATION_COLUMNS \
  "name, project, zone, size, capacity_units, resource_type, create_time, seq"

ReservationRow ReadReservationRow(const Statement& s) {
  return {s.ColumnText(0), s.ColumnText(1), s.ColumnText(2), s.ColumnInt64(3),
          s.ColumnText(4), s.ColumnText(5), s.ColumnText(6), s.ColumnInt64(7)};
}

Status MissingReservation(std::string_view name) {
  return Status::NotFound("reservation '" + std::string(name) + "' not found");
}

}  // namespace

Result<int64_t> ReservationRepository::Insert(Txn& txn, const ReservationRow& row) const {
  TPUEMU_PREPARE_OR_RETURN(
      s, txn.Prepare(
             "INSERT INTO reservations (name, project, zone, size, capacity_units, resource_type, "
             "create_time) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) RETURNING seq"));
  s.Bind(1, row.name)
      .Bind(2, row.project)
      .Bind(3, row.zone)
      .Bind(4, row.size)
      .Bind(5, row.capacity_units)
      .Bind(6, row.resource_type)
      .Bind(7, row.create_time);
  return InsertReturningSeq(s, "reservation", row.name);
}

Status ReservationRepository::Delete(Txn& txn, std::string_view name) const {
  TPUEMU_PREPARE_OR_RETURN(stmt, txn.Prepare("DELETE FROM reservations WHERE name = ?1"));
  stmt.Bind(1, name);
  TPUEMU_RETURN_IF_ERROR(stmt.Run());
  if (txn.Changes() == 0) return MissingReservation(name);
  return Status::Ok();
}

Result<ReservationRow> ReservationRepository::Get(Txn& txn, std::string_view name) const {
  TPUEMU_PREPARE_OR_RETURN(
      stmt, txn.Prepare("SELECT " TPUEMU_RESERVATION_COLUMNS " FROM reservations WHERE name = ?1"));
  stmt.Bind(1, name);
  Result<bool> row = stmt.Step();
  if (!row.ok()) return row.status();
  if (!*row) return MissingReservation(name);
  return ReadReservationRow(stmt);
}

Result<std::vector<ReservationRow>> ReservationRepository::List(Txn& txn, std::string_view project,
                                                                std::string_view zone) const {
  TPUEMU_PREPARE_OR_RETURN(
      stmt, txn.Prepare("SELECT " TPUEMU_RESERVATION_COLUMNS TPUEMU_RESERVATIONS_IN_LOCATION));
  stmt.Bind(1, project).Bind(2, zone);
  std::vector<ReservationRow> rows;
  for (;;) {
    Result<bool> more = stmt.Step();
    if (!more.ok()) return more.status();
    if (!*more) return rows;
    rows.push_back(ReadReservationRow(stmt));
  }
}

Result<std::vector<ReservationRow>> ReservationRepository::List(std::string_view project,
                                                                std::string_view zone) const {
  return store_.ReadResult<std::vector<ReservationRow>>(
      [&](Txn& txn) { return List(txn, project, zone); });
}

}  // namespace tpuemu::db
