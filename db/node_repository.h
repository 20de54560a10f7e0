// NodeRepository: typed access to the `nodes` table (one row per TPU VM node).
//
// Writes take a Txn& so the caller can change a node and its operation in one transaction
// (Store::Transaction). Every read has a Txn& form, for read-modify-write and quota checks inside
// a transaction, and a convenience form that runs its own Store::Read. The repository holds no
// state besides the Store reference (not owned; the Store must outlive it), so it is as
// thread-safe as the Store. Errors: kNotFound for a missing row, kAlreadyExists for a duplicate
// name, and whatever the Store reports (kBusy, kIoError, ...).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "db/store.h"

namespace tpuemu::db {

struct NodeRow {
  std::string name;  // "projects/p/locations/z/nodes/n"
  std::string project;
  std::string zone;
  std::string node_id;
  std::string uid;
  std::string state;  // "CREATING", "READY", ... as the service spells it
  std::string accelerator_type;
  int64_t tensorcores = 0;
  std::string create_time;
  std::string update_time;
  std::string resource_json;  // opaque to db/
  std::optional<std::string> pending_operation;
  std::optional<int64_t> pending_due_ms;
  std::optional<std::string> queued_resource;  // the queued resource that made the node, if any
  int64_t zone_tensorcores = 0;  // what it takes from the zone's general capacity (see v4 schema)
  // The replica that drives the node's timers (schema v8): the last one that wrote it, or the one
  // that adopted it when that one died. Unset on rows from before v8.
  std::optional<std::string> owner;
  int64_t seq = 0;  // assigned by Insert (the input's value is ignored); never changed by Update

  friend bool operator==(const NodeRow&, const NodeRow&) = default;
};

class NodeRepository {
 public:
  // Zone value meaning "every zone of the project" (Google's `locations/-`).
  static constexpr std::string_view kAllZones = "-";

  explicit NodeRepository(Store& store) : store_(store) {}

  // Inserts `row` with a fresh seq and returns that seq. kAlreadyExists if the name is taken.
  Result<int64_t> Insert(Txn& txn, const NodeRow& row) const;
  // Replaces every column but name and seq of the row named row.name. kNotFound if absent.
  Status Update(Txn& txn, const NodeRow& row) const;
  // kNotFound if absent.
  Status Delete(Txn& txn, std::string_view name) const;

  Result<NodeRow> Get(Txn& txn, std::string_view name) const;
  Result<NodeRow> Get(std::string_view name) const;

  // Up to `limit` rows (no limit when limit <= 0) of `project` in `zone` (kAllZones for all) with
  // seq > after_seq, ordered by seq. The next page starts after the last row's seq.
  Result<std::vector<NodeRow>> List(Txn& txn, std::string_view project, std::string_view zone,
                                    int64_t after_seq, int limit) const;
  Result<std::vector<NodeRow>> List(std::string_view project, std::string_view zone,
                                    int64_t after_seq, int limit) const;
  // The names of List's rows, same page and order: for a reader that holds the nodes themselves
  // (NodeManager's cache), without copying every column of every row out of the store.
  Result<std::vector<std::string>> ListNames(std::string_view project, std::string_view zone,
                                             int64_t after_seq, int limit) const;

  // Rows with a pending_operation, soonest pending_due_ms first (recovery after a restart).
  Result<std::vector<NodeRow>> ListPending(Txn& txn) const;
  Result<std::vector<NodeRow>> ListPending() const;
  // Makes `owner` the owner of every node whose owner is not a live replica (absent from the
  // `replicas` table, or unset) — and of the nodes `owner` already owns when `include_own` (a
  // restarted replica under the same id) — and returns those rows by seq.
  Result<std::vector<NodeRow>> AdoptOrphans(Txn& txn, std::string_view owner,
                                            bool include_own) const;

  // Sum of tensorcores over every node of `project` in `zone` (kAllZones for all), any state.
  Result<int64_t> SumTensorCores(Txn& txn, std::string_view project, std::string_view zone) const;
  Result<int64_t> SumTensorCores(std::string_view project, std::string_view zone) const;
  // Sum of zone_tensorcores over every node in `zone`, all projects (the zone's general capacity
  // in use).
  Result<int64_t> SumTensorCoresInZone(Txn& txn, std::string_view zone) const;
  // Sum of tensorcores over the nodes of `project` no queued resource owns (a queued resource
  // holds its nodes' share of the project quota itself).
  Result<int64_t> SumStandaloneTensorCores(Txn& txn, std::string_view project) const;

  // The nodes a queued resource made, in creation order.
  Result<std::vector<NodeRow>> ListByQueuedResource(Txn& txn,
                                                    std::string_view queued_resource) const;
  Result<std::vector<NodeRow>> ListByQueuedResource(std::string_view queued_resource) const;
  // Up to `limit` nodes of every project with seq > after_seq, in seq order (fault recovery and
  // the random preemption sweep); only those `owner` owns when it is given.
  Result<std::vector<NodeRow>> ListAll(int64_t after_seq, int limit,
                                       std::optional<std::string_view> owner = {}) const;

  // Number of nodes per state, over all projects (states with no node are absent).
  Result<std::map<std::string, int64_t>> CountByState(Txn& txn) const;
  Result<std::map<std::string, int64_t>> CountByState() const;

 private:
  Store& store_;
};

}  // namespace tpuemu::db
