// UtilizationRepository: the `utilization_samples` table (schema v3) — one row per node per
// sampling interval: duty cycle, TensorCore and MXU utilization, HBM used and total. Rows older
// than the retention are pruned by the sampler, so the table stays bounded.
//
// Holds only the Store reference (not owned; must outlive the repository): as thread-safe as the
// Store. Errors: whatever the Store reports.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "db/store.h"

namespace tpuemu::db {

struct UtilizationRow {
  std::string node;  // "projects/p/locations/z/nodes/n"
  int64_t time_unix_ms = 0;
  double duty_cycle = 0;              // 0..1
  double tensorcore_utilization = 0;  // 0..1
  double mxu_utilization = 0;         // 0..1
  int64_t hbm_used_bytes = 0;
  int64_t hbm_total_bytes = 0;
  friend bool operator==(const UtilizationRow&, const UtilizationRow&) = default;
};

class UtilizationRepository {
 public:
  explicit UtilizationRepository(Store& store) : store_(store) {}

  // Inserts (replaces a sample of the same node and millisecond).
  Status Append(Txn& txn, const UtilizationRow& row) const;
  // The node's samples with time_unix_ms >= since_unix_ms, oldest first.
  Result<std::vector<UtilizationRow>> List(std::string_view node, int64_t since_unix_ms) const;
  // Deletes every sample older than before_unix_ms; returns how many went.
  Result<int64_t> PruneBefore(Txn& txn, int64_t before_unix_ms) const;

 private:
  Store& store_;
};

}  // namespace tpuemu::db
