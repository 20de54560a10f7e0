// ReservationRepository: the `reservations` table (schema v4) — capacity set aside for one
// project in one zone, configured through the emulator's endpoints and listed by v2alpha1's
// reservations.list. Holds only the Store reference (not owned; must outlive it). Errors:
// kNotFound, kAlreadyExists, and whatever the Store reports.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "db/store.h"

namespace tpuemu::db {

struct ReservationRow {
  std::string name;  // "projects/p/locations/z/reservations/r"
  std::string project;
  std::string zone;
  int64_t size = 0;
  std::string capacity_units;  // "CORES" | "CHIPS"
  std::string resource_type;   // accelerator family, e.g. "v5litepod"; "" = any
  std::string create_time;
  int64_t seq = 0;  // assigned by Insert
  friend bool operator==(const ReservationRow&, const ReservationRow&) = default;
};

class ReservationRepository {
 public:
  explicit ReservationRepository(Store& store) : store_(store) {}

  Result<int64_t> Insert(Txn& txn, const ReservationRow& row) const;
  Status Delete(Txn& txn, std::string_view name) const;
  Result<ReservationRow> Get(Txn& txn, std::string_view name) const;
  // The reservations of `project` in `zone`, in creation order.
  Result<std::vector<ReservationRow>> List(Txn& txn, std::string_view project,
                                           std::string_view zone) const;
  Result<std::vector<ReservationRow>> List(std::string_view project, std::string_view zone) const;

 private:
  Store& store_;
};

}  // namespace tpuemu::db
