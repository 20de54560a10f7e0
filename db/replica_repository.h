// ReplicaRepository: typed access to the `replicas` table (schema v8) — the tpuemud processes
// serving one database, each with the time of its last heartbeat. Times come from the DATABASE's
// clock, never the caller's, so replicas on machines whose clocks disagree still agree on who is
// alive.
//
// Holds only the Store reference (not owned; it must outlive this): as thread-safe as the Store.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "db/store.h"

namespace tpuemu::db {

struct ReplicaRow {
  std::string id;
  std::string address;
  int64_t started_ms = 0;
  int64_t heartbeat_ms = 0;
  friend bool operator==(const ReplicaRow&, const ReplicaRow&) = default;
};

class ReplicaRepository {
 public:
  explicit ReplicaRepository(Store& store) : store_(store) {}

  // Inserts or refreshes replica `id` (its heartbeat is now; started_ms too when `starting`).
  Status Beat(Txn& txn, std::string_view id, std::string_view address, bool starting) const;
  // Deletes the replicas whose last heartbeat is older than `lease_ms` (they are dead) and
  // returns their ids.
  Result<std::vector<std::string>> Expire(Txn& txn, int64_t lease_ms) const;
  // Deletes every replica but `id` (a store only one process may serve: SQLite).
  Status RemoveOthers(Txn& txn, std::string_view id) const;
  Status Remove(Txn& txn, std::string_view id) const;
  // Every live replica, by id, with the database's clock (now_ms) at the read.
  Result<std::vector<ReplicaRow>> List(int64_t* now_ms = nullptr) const;

 private:
  // The SQL expression for "now" in unix ms on the store's backend.
  std::string_view NowMs() const;

  Store& store_;
};

}  // namespace tpuemu::db
