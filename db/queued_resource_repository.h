// QueuedResourceRepository: typed access to the `queued_resources` table (schema v4), one row per
// Cloud TPU QueuedResource.
//
// Same conventions as NodeRepository: writes take a Txn& (a queued resource and its Operation
// change in one transaction), reads come in a Txn& form and, where the service reads outside a
// write, a convenience form running its own Store::Read. Holds only the Store reference (not
// owned; must outlive it). Errors: kNotFound for a missing row, kAlreadyExists for a duplicate
// name, and whatever the Store reports.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "db/store.h"

namespace tpuemu::db {

struct QueuedResourceRow {
  std::string name;  // "projects/p/locations/z/queuedResources/q"
  std::string project;
  std::string zone;
  std::string queued_resource_id;
  std::string state;             // "CREATING", "ACTIVE", ... as the service spells it
  int64_t tensorcores = 0;       // held against the project quota while the row exists
  int64_t held_tensorcores = 0;  // capacity held now (its reservation's, else its zone's)
  std::optional<std::string> reservation;
  std::string create_time;
  std::string update_time;
  std::string resource_json;  // opaque to db/
  std::optional<std::string> pending_operation;
  std::optional<int64_t> due_ms;
  int64_t seq = 0;  // assigned by Insert (the input's value is ignored); never changed by Update

  friend bool operator==(const QueuedResourceRow&, const QueuedResourceRow&) = default;
};

class QueuedResourceRepository {
 public:
  static constexpr std::string_view kAllZones = "-";

  explicit QueuedResourceRepository(Store& store) : store_(store) {}

  // Inserts `row` with a fresh seq and returns that seq. kAlreadyExists if the name is taken.
  Result<int64_t> Insert(Txn& txn, const QueuedResourceRow& row) const;
  // Replaces every column but name and seq. kNotFound if absent.
  Status Update(Txn& txn, const QueuedResourceRow& row) const;
  // kNotFound if absent.
  Status Delete(Txn& txn, std::string_view name) const;

  Result<QueuedResourceRow> Get(Txn& txn, std::string_view name) const;
  Result<QueuedResourceRow> Get(std::string_view name) const;

  // Up to `limit` rows (no limit when limit <= 0) of `project` in `zone` (kAllZones for all) with
  // seq > after_seq, ordered by seq.
  Result<std::vector<QueuedResourceRow>> List(std::string_view project, std::string_view zone,
                                              int64_t after_seq, int limit) const;
  // Every row of `zone` (all projects; kAllZones for every zone), in seq order: recovery and the
  // queue of a zone whose capacity changed.
  Result<std::vector<QueuedResourceRow>> ListInZone(Txn& txn, std::string_view zone) const;
  Result<std::vector<QueuedResourceRow>> ListInZone(std::string_view zone) const;
  // Every row provisioning in, or holding, `reservation`, in seq order.
  Result<std::vector<QueuedResourceRow>> ListInReservation(Txn& txn,
                                                           std::string_view reservation) const;

  // Sum of tensorcores over the queued resources of `project` (every zone, every state).
  Result<int64_t> SumTensorCores(Txn& txn, std::string_view project) const;
  // Sum of held_tensorcores over the queued resources of `zone` outside reservations.
  Result<int64_t> SumHeldInZone(Txn& txn, std::string_view zone) const;

 private:
  Store& store_;
};

}  // namespace tpuemu::db
