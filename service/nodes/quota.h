// TensorCoreQuota: the TensorCores that nodes and queued resources hold, counted per zone (all
// projects, against the zone's capacity) and per project (all zones, against the project
// quota), and the checks a create makes, with the RESOURCE_EXHAUSTED errors the real service
// gives.
//
// Zone: a standalone node takes its TensorCores from the zone's general capacity from the
// create's commit until its delete completes, unless it was preempted (the capacity went back;
// Node::ZoneTensorCores). A queued resource takes the capacity of all its nodes at once when it
// starts provisioning and gives it back when they are gone (its nodes take none themselves);
// inside a reservation it takes the reservation's instead. The capacity is
// --zone-capacity-tensorcores unless a zone has an override set at run time (SetZoneCapacity;
// service/faults/ persists them). Project: a node counts until deleted, in every state, unless a
// queued resource made it; a queued resource counts all the nodes it asks for from its create until
// it is deleted, in every state (SUSPENDED and FAILED included), as the real service does.
//
// The counts are kept in memory so a create does not scan the tables: zones are counted from the
// store by Reseed(); a project is counted the first time a create in it is checked (inside a
// batcher body, so the count is exact) and then kept up to date by the Add* calls.
//
// Threads: every member is guarded by mu_; CheckProject must run inside a WriteBatcher body (its
// first count reads the store with that body's Txn). The store and catalog are borrowed and must
// outlive the quota.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "base/status.h"
#include "db/node_repository.h"
#include "db/queued_resource_repository.h"
#include "db/store.h"
#include "engine/hardware/hardware.h"
#include "service/catalog/catalog.h"

namespace tpuemu::service {

struct QuotaLimits {
  // TensorCores one zone can hold across all projects (unless overridden per zone).
  int64_t zone_capacity_tensorcores = 65536;
  // TensorCores one project may hold across zones; 0 = unlimited.
  int64_t project_quota_tensorcores = 0;
};

// The real service's stockout, as a create's Operation carries it (code 8): RESOURCE_EXHAUSTED
// "There is no more capacity in the zone "Z"; …[EID: 0x<last 8 characters of operation_name>]",
// then " " and `detail` when given (the emulator's own reason, e.g. which host budget ran out).
Status ZoneStockout(const std::string& zone, const std::string& operation_name,
                    const std::string& detail = "");

class TensorCoreQuota {
 public:
  TensorCoreQuota(db::Store& store, const Catalog& catalog, QuotaLimits limits);

  // Several replicas write the store (PostgreSQL): counts kept in memory would miss the others'
  // writes, so every check counts from the store inside its transaction instead (Sync, and
  // project counts never cached), and ZoneUsed reads the store. Set before the first write.
  void SetShared(bool shared) { shared_ = shared; }
  // Inside a batcher body, before CheckZone/ZoneUsed decide on `zone`: with SetShared, recounts
  // the zone from the store through `txn` (under the write lock, so the count is exact).
  Status Sync(db::Txn& txn, const std::string& zone);

  // Counts every zone of the catalog from the store and forgets the project counts (counted
  // again on first use): at startup, and after a commit failed once the counts had moved.
  Status Reseed();
  // Forgets every count and every capacity override (after the store was wiped).
  void Clear();

  // Inside a batcher body. OK when `project` may take `tensorcores` more (always, without
  // reading, when there is no project quota); else RESOURCE_EXHAUSTED "Quota
  // 'TPU_TENSORCORES_PER_PROJECT' exceeded. Limit: L in project P (in use: U, requested: R for
  // <what>)." (HTTP 429, like a Google quota error).
  Status CheckProject(db::Txn& txn, const std::string& project, int64_t tensorcores,
                      const std::string& what);
  Status CheckProject(db::Txn& txn, const std::string& project,
                      const engine::AcceleratorType& type) {
    return CheckProject(txn, project, type.tensorcores, type.name);
  }
  // OK when `zone` has room for `tensorcores` more; else RESOURCE_EXHAUSTED "There is no more
  // capacity in the zone "Z"; …[EID: 0x<last 8 characters of operation_name>]", the error the
  // real service puts on the create's Operation (code 8; the create itself is accepted).
  Status CheckZone(const std::string& zone, int64_t tensorcores,
                   const std::string& operation_name) const;

  // Something holding TensorCores in `project` / `zone` appeared (positive) or went (negative).
  // Call them last in the batcher body, so a body that fails earlier leaves the counts
  // untouched; if the commit then fails, Reseed().
  void AddProject(const std::string& project, int64_t tensorcores);
  void AddZone(const std::string& zone, int64_t tensorcores);

  // TensorCores held in `zone`'s general capacity (all projects): as stored with SetShared (not
  // inside a batcher body), else as counted.
  int64_t ZoneUsed(const std::string& zone) const;
  // As counted in memory: inside a batcher body (after Sync with SetShared).
  int64_t ZoneCounted(const std::string& zone) const;
  // TensorCores `zone` holds: its override, else the --zone-capacity-tensorcores default.
  int64_t ZoneCapacity(const std::string& zone) const;
  // Overrides the capacity of one zone (never below 0; existing nodes stay, new ones wait).
  void SetZoneCapacity(const std::string& zone, int64_t tensorcores);
  void ClearZoneCapacity(const std::string& zone);

 private:
  Result<int64_t> ProjectUsed(db::Txn& txn, const std::string& project);
  // The zone's use as stored: its nodes' and its queued resources' TensorCores.
  Result<int64_t> CountZone(db::Txn& txn, const std::string& zone) const;

  db::Store& store_;
  const Catalog& catalog_;
  const QuotaLimits limits_;
  bool shared_ = false;  // set before the first write
  db::NodeRepository nodes_;
  db::QueuedResourceRepository queued_resources_;

  mutable std::mutex mu_;
  std::map<std::string, int64_t> zone_tensorcores_;  // guarded by mu_
  std::map<std::string, int64_t> zone_capacity_;     // overrides; guarded by mu_
  // Only projects counted since the last Reseed/Clear; absent = not counted yet. Guarded by mu_.
  std::map<std::string, int64_t> project_tensorcores_;
};

}  // namespace tpuemu::service
