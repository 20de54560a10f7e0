// FaultSettingsRepository: the faults an operator configures at run time (schema v4) — the
// `chaos_rules` table (one JSON rule per id, opaque here) and the `zone_capacity` table (per-zone
// TensorCore capacity overriding the --zone-capacity-tensorcores default). Both are small and
// read whole at startup. Holds only the Store reference (not owned). Errors: kNotFound,
// kAlreadyExists, and whatever the Store reports.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "db/store.h"

namespace tpuemu::db {

struct ChaosRuleRow {
  std::string id;
  std::string rule_json;  // opaque to db/
  std::string create_time;
  int64_t seq = 0;  // assigned by InsertChaosRule
  friend bool operator==(const ChaosRuleRow&, const ChaosRuleRow&) = default;
};

class FaultSettingsRepository {
 public:
  explicit FaultSettingsRepository(Store& store) : store_(store) {}

  Result<int64_t> InsertChaosRule(Txn& txn, const ChaosRuleRow& row) const;
  Status DeleteChaosRule(Txn& txn, std::string_view id) const;
  // Every rule, in creation order.
  Result<std::vector<ChaosRuleRow>> ListChaosRules() const;

  // Sets (inserts or replaces) the capacity of `zone`.
  Status SetZoneCapacity(Txn& txn, std::string_view zone, int64_t tensorcores) const;
  // Forgets the override of `zone` (OK when there was none).
  Status ClearZoneCapacity(Txn& txn, std::string_view zone) const;
  // zone -> TensorCores, for every zone with an override.
  Result<std::map<std::string, int64_t>> ListZoneCapacities() const;

 private:
  Store& store_;
};

}  // namespace tpuemu::db
