#include "db/fault_settings_repository.h"

namespace tpuemu::db {

Result<int64_t> FaultSettingsRepository::InsertChaosRule(Txn& txn, const ChaosRuleRow& row) const {
  Result<Statement*> stmt = txn.Prepare(
      "INSERT INTO chaos_rules (id, rule_json, create_time) VALUES (?1, ?2, ?3) RETURNING seq");
  if (!stmt.ok()) return stmt.status();
  Statement& s = **stmt;
  s.Bind(1, row.id).Bind(2, row.rule_json).Bind(3, row.create_time);
  Result<bool> inserted = s.Step();
  if (!inserted.ok()) {
    if (inserted.status().code() == StatusCode::kAlreadyExists) {
      return Status::AlreadyExists("chaos rule '" + row.id + "' already exists");
    }
    return inserted.status();
  }
  if (!*inserted) return Status::Internal("insert: RETURNING produced no row");
  int64_t seq = s.ColumnInt64(0);
  TPUEMU_RETURN_IF_ERROR(s.Run());
  return seq;
}

Status FaultSettingsRepository::DeleteChaosRule(Txn& txn, std::string_view id) const {
  Result<Statement*> stmt = txn.Prepare("DELETE FROM chaos_rules WHERE id = ?1");
  if (!stmt.ok()) return stmt.status();
  (*stmt)->Bind(1, id);
  TPUEMU_RETURN_IF_ERROR((*stmt)->Run());
  if (txn.Changes() == 0) {
    return Status::NotFound("chaos rule '" + std::string(id) + "' not found");
  }
  return Status::Ok();
}

Result<std::vector<ChaosRuleRow>> FaultSettingsRepository::ListChaosRules() const {
  return store_.ReadResult<std::vector<ChaosRuleRow>>(
      [&](Txn& txn) -> Result<std::vector<ChaosRuleRow>> {
        Result<Statement*> stmt =
            txn.Prepare("SELECT id, rule_json, create_time, seq FROM chaos_rules ORDER BY seq");
        if (!stmt.ok()) return stmt.status();
        std::vector<ChaosRuleRow> rows;
        for (;;) {
          Result<bool> more = (*stmt)->Step();
          if (!more.ok()) return more.status();
          if (!*more) return rows;
          const Statement& s = **stmt;
          rows.push_back({s.ColumnText(0), s.ColumnText(1), s.ColumnText(2), s.ColumnInt64(3)});
        }
      });
}

Status FaultSettingsRepository::SetZoneCapacity(Txn& txn, std::string_view zone,
                                                int64_t tensorcores) const {
  Result<Statement*> stmt = txn.Prepare(
      "INSERT INTO zone_capacity (zone, tensorcores) VALUES (?1, ?2) "
      "ON CONFLICT (zone) DO UPDATE SET tensorcores = excluded.tensorcores");
  if (!stmt.ok()) return stmt.status();
  (*stmt)->Bind(1, zone).Bind(2, tensorcores);
  return (*stmt)->Run();
}

Status FaultSettingsRepository::ClearZoneCapacity(Txn& txn, std::string_view zone) const {
  Result<Statement*> stmt = txn.Prepare("DELETE FROM zone_capacity WHERE zone = ?1");
  if (!stmt.ok()) return stmt.status();
  (*stmt)->Bind(1, zone);
  return (*stmt)->Run();
}

Result<std::map<std::string, int64_t>> FaultSettingsRepository::ListZoneCapacities() const {
  return store_.ReadResult<std::map<std::string, int64_t>>(
      [&](Txn& txn) -> Result<std::map<std::string, int64_t>> {
        Result<Statement*> stmt = txn.Prepare("SELECT zone, tensorcores FROM zone_capacity");
        if (!stmt.ok()) return stmt.status();
        std::map<std::string, int64_t> out;
        for (;;) {
          Result<bool> more = (*stmt)->Step();
          if (!more.ok()) return more.status();
          if (!*more) return out;
          out[(*stmt)->ColumnText(0)] = (*stmt)->ColumnInt64(1);
        }
      });
}

}  // namespace tpuemu::db
