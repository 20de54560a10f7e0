#include "db/utilization_repository.h"

namespace tpuemu::db {
Status UtilizationRepository::Append(Txn& txn, const UtilizationRow& row) const {
  Result<Statement*> stmt = txn.Prepare(
      "INSERT OR REPLACE INTO utilization_samples (node, time_unix_ms, duty_cycle, "
      "tensorcore_utilization, mxu_utilization, hbm_used_bytes, hbm_total_bytes) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
  if (!stmt.ok()) return stmt.status();
  (*stmt)
      ->Bind(1, row.node)
      .Bind(2, row.time_unix_ms)
      .BindReal(3, row.duty_cycle)
      .BindReal(4, row.tensorcore_utilization)
      .BindReal(5, row.mxu_utilization)
      .Bind(6, row.hbm_used_bytes)
      .Bind(7, row.hbm_total_bytes);
  return (*stmt)->Run();
}

Result<std::vector<UtilizationRow>> UtilizationRepository::List(std::string_view node,
                                                                int64_t since_unix_ms) const {
  return store_.ReadResult<std::vector<UtilizationRow>>(
      [&](Txn& txn) -> Result<std::vector<UtilizationRow>> {
        Result<Statement*> stmt = txn.Prepare(
            "SELECT node, time_unix_ms, duty_cycle, tensorcore_utilization, mxu_utilization, "
            "hbm_used_bytes, hbm_total_bytes FROM utilization_samples "
            "WHERE node = ?1 AND time_unix_ms >= ?2 ORDER BY time_unix_ms");
        if (!stmt.ok()) return stmt.status();
        (*stmt)->Bind(1, node).Bind(2, since_unix_ms);
        std::vector<UtilizationRow> rows;
        for (;;) {
          Result<bool> more = (*stmt)->Step();
          if (!more.ok()) return more.status();
          if (!*more) return rows;
          const Statement& s = **stmt;
          UtilizationRow row;
          row.node = s.ColumnText(0);
          row.time_unix_ms = s.ColumnInt64(1);
          row.duty_cycle = s.ColumnReal(2);
          row.tensorcore_utilization = s.ColumnReal(3);
          row.mxu_utilization = s.ColumnReal(4);
          row.hbm_used_bytes = s.ColumnInt64(5);
          row.hbm_total_bytes = s.ColumnInt64(6);
          rows.push_back(std::move(row));
        }
      });
}

Result<int64_t> UtilizationRepository::PruneBefore(Txn& txn, int64_t before_unix_ms) const {
  Result<Statement*> stmt = txn.Prepare("DELETE FROM utilization_samples WHERE time_unix_ms < ?1");
  if (!stmt.ok()) return stmt.status();
  (*stmt)->Bind(1, before_unix_ms);
  TPUEMU_RETURN_IF_ERROR((*stmt)->Run());
  return txn.Changes();
}

}  // namespace tpuemu::db
