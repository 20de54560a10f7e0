// EventRepository: the `events` table (schema v3) — the append-only feed of node and job state
// changes, per project, ordered by a global `seq` that SQLite never reuses (AUTOINCREMENT), so a
// client's `since` stays meaningful across deletes, retention and POST /_emulator/reset.
//
// Holds only the Store reference (not owned; must outlive the repository): as thread-safe as the
// Store. Errors: whatever the Store reports.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "db/store.h"

namespace tpuemu::db {

struct EventRow {
  int64_t seq = 0;      // assigned by Append
  std::string project;  // "*": an event of every project (a zone's capacity changed)
  std::string time;     // RFC 3339
  int64_t time_unix_ms = 0;
  std::string kind;      // "node" | "job" | "queuedResource" | "fault"
  std::string resource;  // full resource name
  std::string zone;
  std::string state;
  std::optional<std::string> previous_state;  // absent for a new resource
  std::string message;
  friend bool operator==(const EventRow&, const EventRow&) = default;
};

class EventRepository {
 public:
  explicit EventRepository(Store& store) : store_(store) {}

  // Appends and returns the new seq.
  Result<int64_t> Append(Txn& txn, const EventRow& row) const;
  // Up to `limit` events of `project` (and of every project, "*") with seq > after_seq, oldest
  // first.
  Result<std::vector<EventRow>> List(std::string_view project, int64_t after_seq, int limit) const;
  // Keeps the newest `max_rows` events (all projects) and none older than `min_time_unix_ms`;
  // returns how many rows went.
  Result<int64_t> Prune(Txn& txn, int64_t max_rows, int64_t min_time_unix_ms) const;

 private:
  Store& store_;
};

}  // namespace tpuemu::db
