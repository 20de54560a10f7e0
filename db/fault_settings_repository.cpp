#include "db/fault_settings_repository.h"

#include "db/statement_helpers.h"

namespace tpuemu::db {

Result<int64_t> FaultSettingsRepository::InsertChaosRule(Txn& txn, const ChaosRuleRow& row) const {
  TPUEMU_PREPARE_OR_RETURN(s, txn.Prepare("INSERT INTO chaos_rules (id, rule_json, create_time) "
                                          "VALUES (?1, ?2, ?3) RETURNING seq"));
  s.Bind(1, row.id).Bind(2, row.rule_json).Bind(3, row.create_time);
  return InsertReturningSeq(s, "chaos rule", row.id);
}

Status FaultSettingsRepository::DeleteChaosRule(Txn& txn, std::string_view id) const {
  TPUEMU_PREPARE_OR_RETURN(stmt, txn.Prepare("DELETE FROM chaos_rules WHERE id = ?1"));
  stmt.Bind(1, id);
  TPUEMU_RETURN_IF_ERROR(stmt.Run());
  if (txn.Changes() == 0) {
    return Status::NotFound("chaos rule '" + std::string(id) + "' not found");
  }
  return Status::Ok();
}

Result<std::vector<ChaosRuleRow>> FaultSettingsRepository::ListChaosRules() const {
  return store_.ReadResult<std::vector<ChaosRuleRow>>(
      [&](Txn& txn) -> Result<std::vector<ChaosRuleRow>> {
        TPUEMU_PREPARE_OR_RETURN(
            stmt,
            txn.Prepare("SELECT id, rule_json, create_time, seq FROM chaos_rules ORDER BY seq"));
        std::vector<ChaosRuleRow> rows;
        for (;;) {
          Result<bool> more = stmt.Step();
          if (!more.ok()) return more.status();
          if (!*more) return rows;
          const Statement& s = stmt;
          rows.push_back({s.ColumnText(0), s.ColumnText(1), s.ColumnText(2), s.ColumnInt64(3)});
        }
      });
}

Status FaultSettingsRepository::SetZoneCapacity(Txn& txn, std::string_view zone,
                                                int64_t tensorcores) const {
  TPUEMU_PREPARE_OR_RETURN(
      stmt, txn.Prepare("INSERT INTO zone_capacity (zone, tensorcores) VALUES (?1, ?2) "
                        "ON CONFLICT (zone) DO UPDATE SET tensorcores = excluded.tensorcores"));
  stmt.Bind(1, zone).Bind(2, tensorcores);
  return stmt.Run();
}

Status FaultSettingsRepository::ClearZoneCapacity(Txn& txn, std::string_view zone) const {
  TPUEMU_PREPARE_OR_RETURN(stmt, txn.Prepare("DELETE FROM zone_capacity WHERE zone = ?1"));
  stmt.Bind(1, zone);
  return stmt.Run();
}

Result<std::map<std::string, int64_t>> FaultSettingsRepository::ListZoneCapacities() const {
  return store_.ReadResult<std::map<std::string, int64_t>>(
      [&](Txn& txn) -> Result<std::map<std::string, int64_t>> {
        TPUEMU_PREPARE_OR_RETURN(stmt, txn.Prepare("SELECT zone, tensorcores FROM zone_capacity"));
        std::map<std::string, int64_t> out;
        for (;;) {
          Result<bool> more = stmt.Step();
          if (!more.ok()) return more.status();
          if (!*more) return out;
          out[stmt.ColumnText(0)] = stmt.ColumnInt64(1);
        }
      });
}

}  // namespace tpuemu::db
