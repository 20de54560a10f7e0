// ReservationBook: capacity set aside for one project in one zone. The real service sells
// reservations; the emulator lets you configure them (POST /_emulator/…/reservations) so that
// queued resources asking for reserved capacity (reservationName, gcloud --reserved, v2alpha1
// guaranteed.reserved) have somewhere to run, and v2alpha1's reservations.list shows them.
//
// A reservation has a size in CORES (TensorCores) or CHIPS and optionally a resource type (an
// accelerator family such as "v5litepod", "v5p", "v4"; empty = any). A queued resource in a
// reservation takes its room there instead of the zone's general capacity, from PROVISIONING
// until its nodes are gone; `usage` is the sum of what the queued resources in it hold.
//
// Threads: writes run on the write path's WriteBatcher, the one the nodes' writes run on
// (borrowed, like the store and catalog; all must outlive the book); the Txn& forms must be
// called from inside one of its bodies.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "db/queued_resource_repository.h"
#include "db/reservation_repository.h"
#include "db/store.h"
#include "engine/hardware/hardware.h"
#include "service/catalog/catalog.h"
#include "service/common/write_batcher.h"

namespace tpuemu::service {

struct Reservation {
  std::string name;  // projects/{project}/locations/{zone}/reservations/{id}
  std::string project;
  std::string zone;
  int64_t size = 0;
  std::string capacity_units;  // "CORES" | "CHIPS"
  std::string resource_type;   // "" = any accelerator family
  std::string create_time;
  int64_t used = 0;  // in capacity_units
};

// The v2alpha1 Reservation: {name, standard: {size, capacityUnits, resourceType, usage: {total}},
// state: "ACTIVE"}.
nlohmann::json RenderReservation(const Reservation& reservation);

class ReservationBook {
 public:
  ReservationBook(db::Store& store, WriteBatcher& batcher, const Catalog& catalog);

  // INVALID_ARGUMENT naming the field for a bad id (^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$), a size
  // below 1, units other than CORES/CHIPS; NOT_FOUND for an unknown zone; ALREADY_EXISTS.
  Result<Reservation> Create(const std::string& project, const std::string& zone,
                             const std::string& id, int64_t size, const std::string& units,
                             const std::string& resource_type);
  Status Delete(const std::string& name);
  // The project's reservations in `zone`, with their usage, in creation order.
  Result<std::vector<Reservation>> List(const std::string& project, const std::string& zone) const;

  // Inside a batcher body. The reservation a queued resource of `type` asked for: `requested` is
  // a full name, or ".../reservations/-" for any of the project's reservations in the zone that
  // fits the type. INVALID_ARGUMENT naming reservationName when none exists, or it belongs to
  // another project or zone, or its resource type does not match.
  Result<std::string> Resolve(db::Txn& txn, const std::string& project, const std::string& zone,
                              const std::string& requested,
                              const engine::AcceleratorType& type) const;
  // Inside a batcher body. Whether `reservation` has room for `tensorcores` (or `chips`, by its
  // units) on top of what the queued resources in it hold; false when it was deleted.
  Result<bool> HasRoom(db::Txn& txn, const std::string& reservation, int64_t tensorcores,
                       int64_t chips) const;

 private:
  Result<int64_t> Used(db::Txn& txn, const db::ReservationRow& row) const;

  const Catalog& catalog_;
  WriteBatcher& batcher_;
  db::Store& store_;
  db::ReservationRepository reservations_;
  db::QueuedResourceRepository queued_resources_;
};

// "v5litepod-8" -> "v5litepod", "v4-32" -> "v4": the family a reservation's resource type names.
std::string AcceleratorFamily(const std::string& type_name);

}  // namespace tpuemu::service
