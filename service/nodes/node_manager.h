// NodeManager: the life cycle of the Cloud TPU API's nodes — create, start, stop, delete, update
// — from the request to the completed transition, recovery after a restart and the observers of
// every state change.
//
// Every mutating call validates against the catalog and the state machine
// (node_state_machine.h), then writes the node and its Operation in ONE transaction and returns the
// Operation (not done). The Scheduler completes the transition after the configured delay, again
// in one transaction, and marks the Operation done with the Node (or Empty, for delete) as its
// response. Due times are persisted with the node, so Recover() after a restart resumes every
// unfinished transition.
//
// Who does what: OperationManager (service/operations/) reads and writes the Operations;
// TensorCoreQuota (quota.h) counts TensorCores per zone and project and makes a create's quota
// checks; NodeUpdateMask (update_mask.h) validates and applies a patch's updateMask; NodeCache
// (node_cache.h) serves reads; node_rows.h converts to and from the store's rows; page tokens are
// service/common/page_token.h.
//
// Ownership: the store, write path (service/write_path/: the WriteBatcher that runs every node and
// Operation write, the OperationManager, the quota counters, the event sink), scheduler and
// catalog are borrowed and must outlive the manager, and the scheduler must be stopped before the
// manager is destroyed (its callbacks point here). The manager owns the read cache; it hooks the
// cache to the write path's batches, and its destructor stops the batcher.
//
// Threads: every mutation (API calls, scheduled completions, operations.delete/cancel) runs as a
// body of the write path's WriteBatcher, which runs bodies one at a time (so read-check-write is
// atomic) and commits many of them in one transaction (group commit). Reads go through the cache
// (node_cache.h): a batch drops the nodes it writes and they are read from the store until it
// ends; the nodes it does not write stay cached. The quota guards its
// counters with its own mutex, the cache with its own; observers_ is guarded by observer_mu_.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "db/node_repository.h"
#include "db/store.h"
#include "service/catalog/catalog.h"
#include "service/common/page_token.h"
#include "service/common/scheduler.h"
#include "service/nodes/node.h"
#include "service/nodes/node_cache.h"
#include "service/nodes/node_state_machine.h"
#include "service/nodes/quota.h"
#include "service/operations/operation.h"
#include "service/write_path/write_path.h"

namespace tpuemu::service {

struct NodeManagerOptions {
  int64_t provisioning_delay_ms = 1000;  // CREATING -> READY
  int64_t transition_delay_ms = 500;     // STARTING, STOPPING, DELETING, update
  // The next two are the write path's quota limits (WritePathOptionsOf below), not read by
  // NodeManager itself: they sit here with the daemon's other node settings.
  // TensorCores one zone can hold across all projects; a create past it fails its Operation with
  // RESOURCE_EXHAUSTED (code 8) like the real service.
  int64_t zone_capacity_tensorcores = QuotaLimits{}.zone_capacity_tensorcores;
  // TensorCores one project may hold across zones (nodes not yet deleted, any state); 0 =
  // unlimited. A create past it fails synchronously with RESOURCE_EXHAUSTED "Quota
  // 'TPU_TENSORCORES_PER_PROJECT' exceeded. …" (HTTP 429), like a Google quota error.
  int64_t project_quota_tensorcores = 0;
  // This process among the replicas sharing the store (service/replicas/replica_set.h): every
  // node it writes becomes its own to drive (nodes.owner), and it completes only the transitions
  // of nodes it owns.
  std::string replica_id = "local";
  // Other replicas write the same store (PostgreSQL): reads check the cache against the stored
  // row (the write path's quota is told the same through WritePathOptions::shared_store).
  bool shared_store = false;
  // Admission (WriteBacklog): a client write is pushed back once a due transition has waited
  // longer than this for its commit (the transition lag), so transitions keep their delay (within
  // about 100 ms) instead of falling seconds behind. 0 = never push back.
  int64_t max_write_lag_ms = 0;  // tpuemud's --max-write-lag-ms: 50; 0 here (tests, tools)
};

// The write path's options for these node settings: their quota limits and shared_store.
inline WritePathOptions WritePathOptionsOf(const NodeManagerOptions& options) {
  return {.quota = {.zone_capacity_tensorcores = options.zone_capacity_tensorcores,
                    .project_quota_tensorcores = options.project_quota_tensorcores},
          .shared_store = options.shared_store};
}

struct NodePage {
  std::vector<Node> nodes;
  std::string next_page_token;  // empty on the last page
};

struct NodeViewPage {
  std::vector<std::shared_ptr<const NodeView>> nodes;
  std::string next_page_token;  // empty on the last page
};

class NodeManager {
 public:
  NodeManager(db::Store& store, WritePath& writes, Scheduler& scheduler, const Catalog& catalog,
              NodeManagerOptions options);
  // Stops the write path's batcher first: its queued bodies use every member.
  ~NodeManager();
  NodeManager(const NodeManager&) = delete;
  NodeManager& operator=(const NodeManager&) = delete;

  // Counts the quota from the store and adopts the nodes no live replica owns, with those this
  // replica id owned before a restart (Adopt(true)).
  Status Recover();
  // Makes this replica the owner of every node whose owner is not a live replica (a replica died
  // or left; with `include_own`, also the nodes this id owned: a restart) and schedules the
  // completion of their unfinished transitions. Returns the adopted nodes (their other timers,
  // maintenance, are the fault injectors' to schedule).
  Result<std::vector<Node>> Adopt(bool include_own);
  // The nodes adopted by Recover (for MaintenanceManager::Recover).
  const std::vector<Node>& recovered() const { return recovered_; }
  // Another replica changed node `name` (the change feed): drops its cached view.
  void Forget(const std::string& name) { cache_.Drop(name); }
  // Drops every cached view (the feed reconnected, or another replica wiped the store).
  void ForgetAll() { cache_.Clear(); }

  // The checks Create makes before it writes anything (project and node id, zone, runtime
  // version, labels, description, accelerator type offered in the zone); the resolved type.
  Result<engine::AcceleratorType> CheckSpec(const NodeKey& key, const NodeSpec& spec) const;
  Result<Operation> Create(const NodeKey& key, const NodeSpec& spec);
  Result<Node> Get(const NodeKey& key) const;
  // The node with its rendered v2 JSON, from the read cache (filled from the store on a miss).
  Result<std::shared_ptr<const NodeView>> GetView(const NodeKey& key) const;
  // In creation order, 100 a page by default; zone "-" lists every zone.
  Result<NodePage> List(const std::string& project, const std::string& zone,
                        const PageRequest& page) const;
  // List with each node's rendered JSON (through the read cache).
  Result<NodeViewPage> ListViews(const std::string& project, const std::string& zone,
                                 const PageRequest& page) const;
  // The nodes a queued resource made (by its full name), in creation order.
  Result<std::vector<Node>> ListOfQueuedResource(const std::string& queued_resource) const;
  // Up to `limit` nodes this replica owns (of every project) with seq > after_seq, in creation
  // order (the random preemption sweep: each node is swept by one replica; reads the store, not
  // the cache).
  Result<std::vector<Node>> ListOwned(int64_t after_seq, int limit) const;
  Result<Operation> Delete(const NodeKey& key);
  Result<Operation> Start(const NodeKey& key);
  Result<Operation> Stop(const NodeKey& key);
  // `patch` holds new values for the masked fields (proto3 JSON names); `mask` are the updateMask
  // paths in snake_case or camelCase. Unsupported paths are INVALID_ARGUMENT (update_mask.h).
  Result<Operation> Update(const NodeKey& key, const nlohmann::json& patch,
                           const std::vector<std::string>& mask);

  // Changes a node in place, outside the verb transitions: the faults (preemption, maintenance;
  // service/faults/) use it. `change` runs inside a write batch with the node as stored and that
  // batch's Txn (so it may write Operations through the write path's operations() in the same
  // transaction); a non-OK return leaves everything as it was. The zone's count follows
  // Node::ZoneTensorCores(); a state change gets its event and observers hear of it; `fault`, if
  // given, returns the fault's event for the node as changed, written after the node's own in the
  // same transaction. If `change` leaves a pending transition with a due time, its completion is
  // scheduled.
  // Returns the node as written.
  using FaultEventFn = std::function<db::EventRow(const Node&)>;
  Result<Node> Amend(const NodeKey& key, const std::function<Status(Node&, db::Txn&)>& change,
                     const FaultEventFn& fault = nullptr);

  // Whether a client's write (of a node, a queued resource) should be refused for now: the store
  // is behind, i.e. a due transition has waited longer than max_write_lag_ms for its commit.
  // Returns the delay to suggest (ms), or nullopt when the write may go on.
  std::optional<int64_t> WriteBacklog() const;
  // TensorCores held in `zone`'s general capacity (all projects; see TensorCoreQuota).
  Result<int64_t> TensorCoresInZone(const std::string& zone) const;
  // Wipes every node and operation (POST /_emulator/reset).
  Status Reset();

  // Decides at create whether a new node's workers are sandboxes (service/workers/); unset, no
  // node's are. RESOURCE_EXHAUSTED (its message a detail) when this host cannot boot them: the
  // create is accepted and its Operation fails with the zone's stockout (ZoneStockout, the detail
  // after the standard text), as when the zone is out of TensorCores. What the policy reserved
  // for a create that then writes no node (refused, failed) is handed to `abandon`. Set before the
  // first write; called inside Create, so it must be quick.
  using SandboxPolicy = std::function<Result<Node::Sandbox>(const Node& node)>;
  using SandboxAbandon = std::function<void(const Node& node)>;
  void SetSandboxPolicy(SandboxPolicy policy, SandboxAbandon abandon = nullptr) {
    sandbox_policy_ = std::move(policy);
    sandbox_abandon_ = std::move(abandon);
  }
  // Holds a transition that ends READY (create, start) until `gate(node name)` says the node's
  // workers answer; the completion is retried every 100 ms meanwhile. Set before the first write.
  using ReadyGate = std::function<bool(const std::string& node_name)>;
  void SetReadyGate(ReadyGate gate) { ready_gate_ = std::move(gate); }

  // Called after each committed node state change, in commit order, on the write batcher's thread
  // (events and metrics hang here). It must not call NodeManager mutations (they would wait on it).
  using StateObserver = std::function<void(const Node& node, NodeState previous)>;
  void SetStateObserver(StateObserver observer);  // replaces every observer
  void AddStateObserver(StateObserver observer);  // observers run in the order added

 private:
  Result<Operation> BeginTransition(const NodeKey& key, NodeVerb verb,
                                    const std::function<Status(Node&)>& mutate);
  void Schedule(const std::string& node_name, int64_t due_ms);
  void CompleteTransition(const std::string& node_name);
  Status ResolveAcceleratorType(const NodeKey& key, const NodeSpec& spec,
                                engine::AcceleratorType* type) const;
  void Notify(const Node& node, NodeState previous);
  // The row for `node`, owned by this replica.
  db::NodeRow Row(const Node& node) const;
  // A cached view, checked against `row` as stored when another replica may have written it.
  std::shared_ptr<const NodeView> FindCurrent(const db::NodeRow& row) const;
  // ListViews' page from the cache alone when this replica is the store's only writer and every
  // node of the page is cached; nullopt otherwise (ListViews then reads the rows).
  std::optional<NodeViewPage> CachedPage(const std::string& project, const std::string& zone,
                                         int64_t after_seq, int size) const;

  db::Store& store_;
  WritePath& writes_;  // runs every mutation; its batcher is stopped by the destructor
  Scheduler& scheduler_;
  const Catalog& catalog_;
  const NodeManagerOptions options_;
  db::NodeRepository nodes_;

  // Reads are served from here; bypassed during every batch of writes and Reset (node_cache.h).
  mutable NodeCache cache_;
  SandboxPolicy sandbox_policy_;    // set before the first write
  SandboxAbandon sandbox_abandon_;  // set with it
  ReadyGate ready_gate_;            // set before the first write
  std::mutex observer_mu_;
  std::vector<StateObserver> observers_;  // guarded by observer_mu_
  std::vector<Node> recovered_;           // set by Recover, before serving
};

}  // namespace tpuemu::service
