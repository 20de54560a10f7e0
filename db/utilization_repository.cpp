#include "db/utilization_repository.h"

#include "db/statement_helpers.h"

namespace tpuemu::db {
namespace {

constexpr std::string_view kInsertTick =
    "INSERT INTO utilization_ticks (time_unix_ms) VALUES (?1) ON CONFLICT DO NOTHING";

// Inserts a run of `row`'s values starting at row.time_unix_ms, ending at `end` (or open).
Status InsertRun(Txn& txn, const UtilizationRow& row, const int64_t* end) {
  TPUEMU_PREPARE_OR_RETURN(
      s,
      txn.Prepare(
          "INSERT INTO utilization_runs (node, start_unix_ms, end_unix_ms, duty_cycle, "
          "tensorcore_utilization, mxu_utilization, hbm_used_bytes, hbm_total_bytes) "
          "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT (node, start_unix_ms) DO UPDATE SET "
          "end_unix_ms = excluded.end_unix_ms, duty_cycle = excluded.duty_cycle, "
          "tensorcore_utilization = excluded.tensorcore_utilization, "
          "mxu_utilization = excluded.mxu_utilization, hbm_used_bytes = excluded.hbm_used_bytes, "
          "hbm_total_bytes = excluded.hbm_total_bytes"));
  s.Bind(1, row.node).Bind(2, row.time_unix_ms);
  if (end != nullptr) {
    s.Bind(3, *end);
  } else {
    s.BindNull(3);
  }
  s.BindReal(4, row.duty_cycle)
      .BindReal(5, row.tensorcore_utilization)
      .BindReal(6, row.mxu_utilization)
      .Bind(7, row.hbm_used_bytes)
      .Bind(8, row.hbm_total_bytes);
  return s.Run();
}

Status CloseOpenRun(Txn& txn, const std::string& node, int64_t end_unix_ms) {
  TPUEMU_PREPARE_OR_RETURN(
      stmt,
      txn.Prepare(
          "UPDATE utilization_runs SET end_unix_ms = ?2 WHERE node = ?1 AND end_unix_ms IS NULL"));
  stmt.Bind(1, node).Bind(2, end_unix_ms);
  return stmt.Run();
}

// Reads the values columns starting at `first` (duty_cycle … hbm_total_bytes).
void ReadValues(const Statement& s, int first, UtilizationRow& row) {
  row.duty_cycle = s.ColumnReal(first);
  row.tensorcore_utilization = s.ColumnReal(first + 1);
  row.mxu_utilization = s.ColumnReal(first + 2);
  row.hbm_used_bytes = s.ColumnInt64(first + 3);
  row.hbm_total_bytes = s.ColumnInt64(first + 4);
}

}  // namespace

bool SameUtilization(const UtilizationRow& a, const UtilizationRow& b) {
  return a.duty_cycle == b.duty_cycle && a.tensorcore_utilization == b.tensorcore_utilization &&
         a.mxu_utilization == b.mxu_utilization && a.hbm_used_bytes == b.hbm_used_bytes &&
         a.hbm_total_bytes == b.hbm_total_bytes;
}

Status UtilizationRepository::Append(Txn& txn, const UtilizationRow& row) const {
  TPUEMU_PREPARE_OR_RETURN(tick, txn.Prepare(kInsertTick));
  tick.Bind(1, row.time_unix_ms);
  TPUEMU_RETURN_IF_ERROR(tick.Run());
  return InsertRun(txn, row, &row.time_unix_ms);
}

Status UtilizationRepository::RecordTick(Txn& txn, int64_t time_unix_ms,
                                         const std::vector<UtilizationRow>& changed,
                                         const std::vector<std::string>& ended) const {
  TPUEMU_PREPARE_OR_RETURN(tick, txn.Prepare(kInsertTick));
  tick.Bind(1, time_unix_ms);
  TPUEMU_RETURN_IF_ERROR(tick.Run());
  // A run that ends at time - 1 holds every earlier tick and not this one.
  for (const std::string& node : ended) {
    TPUEMU_RETURN_IF_ERROR(CloseOpenRun(txn, node, time_unix_ms - 1));
  }
  for (const UtilizationRow& row : changed) {
    TPUEMU_RETURN_IF_ERROR(CloseOpenRun(txn, row.node, time_unix_ms - 1));
    UtilizationRow run = row;
    run.time_unix_ms = time_unix_ms;
    TPUEMU_RETURN_IF_ERROR(InsertRun(txn, run, nullptr));
  }
  return Status::Ok();
}

Result<std::unordered_map<std::string, UtilizationRow>> UtilizationRepository::OpenRuns() const {
  using Runs = std::unordered_map<std::string, UtilizationRow>;
  return store_.ReadResult<Runs>([&](Txn& txn) -> Result<Runs> {
    TPUEMU_PREPARE_OR_RETURN(
        stmt,
        txn.Prepare(
            "SELECT node, start_unix_ms, duty_cycle, tensorcore_utilization, mxu_utilization, "
            "hbm_used_bytes, hbm_total_bytes FROM utilization_runs WHERE end_unix_ms IS NULL"));
    Runs runs;
    for (;;) {
      Result<bool> more = stmt.Step();
      if (!more.ok()) return more.status();
      if (!*more) return runs;
      UtilizationRow row;
      row.node = stmt.ColumnText(0);
      row.time_unix_ms = stmt.ColumnInt64(1);
      ReadValues(stmt, 2, row);
      std::string node = row.node;
      runs.emplace(std::move(node), std::move(row));
    }
  });
}

Result<std::vector<UtilizationRow>> UtilizationRepository::List(std::string_view node,
                                                                int64_t since_unix_ms) const {
  return store_.ReadResult<std::vector<UtilizationRow>>(
      [&](Txn& txn) -> Result<std::vector<UtilizationRow>> {
        // Each of the node's runs that reaches the window, joined with the ticks it spans.
        TPUEMU_PREPARE_OR_RETURN(
            stmt,
            txn.Prepare(
                "SELECT t.time_unix_ms, r.duty_cycle, r.tensorcore_utilization, r.mxu_utilization, "
                "r.hbm_used_bytes, r.hbm_total_bytes FROM utilization_runs r "
                "JOIN utilization_ticks t ON t.time_unix_ms >= r.start_unix_ms "
                "AND t.time_unix_ms <= COALESCE(r.end_unix_ms, 9223372036854775807) "
                "WHERE r.node = ?1 AND COALESCE(r.end_unix_ms, 9223372036854775807) >= ?2 "
                "AND t.time_unix_ms >= ?2 ORDER BY t.time_unix_ms"));
        stmt.Bind(1, node).Bind(2, since_unix_ms);
        std::vector<UtilizationRow> rows;
        for (;;) {
          Result<bool> more = stmt.Step();
          if (!more.ok()) return more.status();
          if (!*more) return rows;
          UtilizationRow row;
          row.node = std::string(node);
          row.time_unix_ms = stmt.ColumnInt64(0);
          ReadValues(stmt, 1, row);
          rows.push_back(std::move(row));
        }
      });
}

Result<int64_t> UtilizationRepository::PruneBefore(Txn& txn, int64_t before_unix_ms) const {
  TPUEMU_PREPARE_OR_RETURN(ticks,
                           txn.Prepare("DELETE FROM utilization_ticks WHERE time_unix_ms < ?1"));
  ticks.Bind(1, before_unix_ms);
  TPUEMU_RETURN_IF_ERROR(ticks.Run());
  TPUEMU_PREPARE_OR_RETURN(
      runs, txn.Prepare(
                "DELETE FROM utilization_runs WHERE end_unix_ms IS NOT NULL AND end_unix_ms < ?1"));
  runs.Bind(1, before_unix_ms);
  TPUEMU_RETURN_IF_ERROR(runs.Run());
  return txn.Changes();
}

}  // namespace tpuemu::db
