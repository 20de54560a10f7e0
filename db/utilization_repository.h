// UtilizationRepository: per-node utilization history (schema v6), stored as changes rather than
// as one row per node per sampling interval, so an idle node costs nothing over time.
//
// `utilization_ticks` holds the time of every sampler pass (one row per interval, for all nodes
// at once); `utilization_runs` one row per stretch of identical samples of one node: the node has
// a sample at every tick from start_unix_ms to end_unix_ms (NULL: to the newest tick, the run is
// still open). List() expands the runs back into the samples the sampler took, one per tick.
// The sampler records a whole pass with RecordTick(); Append() stores one sample on its own (a
// closed one-tick run), for a writer that does not sample every node at every tick. Rows older
// than the retention are pruned by the sampler, so both tables stay bounded.
//
// Holds only the Store reference (not owned; must outlive the repository): as thread-safe as the
// Store. Errors: whatever the Store reports.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
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

// True when two samples carry the same values (node and time aside): one run holds both.
bool SameUtilization(const UtilizationRow& a, const UtilizationRow& b);

class UtilizationRepository {
 public:
  explicit UtilizationRepository(Store& store) : store_(store) {}

  // One sample on its own: a tick at row.time_unix_ms and a one-tick run (replaces a sample of
  // the same node and millisecond).
  Status Append(Txn& txn, const UtilizationRow& row) const;
  // One sampler pass at `time_unix_ms`: every node with an open run keeps its values at this tick
  // unless it is in `changed` (its open run ends before this tick and a new one opens with the
  // row's values; a node without an open run just opens one) or in `ended` (its open run ends,
  // the node was not sampled). Nodes in neither cost no write.
  Status RecordTick(Txn& txn, int64_t time_unix_ms, const std::vector<UtilizationRow>& changed,
                    const std::vector<std::string>& ended) const;
  // node -> the values of its open run (time_unix_ms = the run's start): the state a sampler
  // resumes from after a restart.
  Result<std::unordered_map<std::string, UtilizationRow>> OpenRuns() const;
  // The node's samples with time_unix_ms >= since_unix_ms, oldest first.
  Result<std::vector<UtilizationRow>> List(std::string_view node, int64_t since_unix_ms) const;
  // Deletes every tick older than before_unix_ms and every run that ended before it; returns how
  // many runs went (a run that reaches past before_unix_ms stays, its older ticks gone).
  Result<int64_t> PruneBefore(Txn& txn, int64_t before_unix_ms) const;

 private:
  Store& store_;
};

}  // namespace tpuemu::db
