// NodeManager: the nodes and operations of the Cloud TPU API, with their life cycle.
//
// Every mutating call validates against the catalog and the state machine, then writes the node and
// its Operation in ONE transaction and returns the Operation (not done). The Scheduler completes
// the transition after the configured delay, again in one transaction, and marks the Operation done
// with the Node (or Empty, for delete) as its response. Due times are persisted with the node, so
// Recover() after a restart resumes every unfinished transition.
//
// Thread-safe: every mutation (API calls and scheduled completions) runs as a body of the
// WriteBatcher, which runs bodies one at a time (so read-check-write is atomic) and commits many of
// them in one transaction (group commit); reads go through a cache that every batch empties and
// bypasses while it writes (service/nodes/node_cache.h), else to the store. The store and scheduler
// are borrowed and must outlive the manager, and the scheduler must be stopped before the manager
// is destroyed (its callbacks point here).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "db/node_repository.h"
#include "db/operation_repository.h"
#include "db/store.h"
#include "service/catalog/catalog.h"
#include "service/common/scheduler.h"
#include "service/common/write_batcher.h"
#include "service/nodes/node.h"
#include "service/nodes/node_cache.h"
#include "service/nodes/node_state_machine.h"
#include "service/operations/operation.h"

namespace tpuemu::service {

struct NodeManagerOptions {
  int64_t provisioning_delay_ms = 1000;  // CREATING -> READY
  int64_t transition_delay_ms = 500;     // STARTING, STOPPING, DELETING, update
  // TensorCores one zone can hold across all projects; a create past it fails its Operation with
  // RESOURCE_EXHAUSTED (code 8) like the real service.
  int64_t zone_capacity_tensorcores = 65536;
  // TensorCores one project may hold across zones (nodes not yet deleted, any state); 0 =
  // unlimited. A create past it fails synchronously with RESOURCE_EXHAUSTED "Quota
  // 'TPU_TENSORCORES_PER_PROJECT' exceeded. …" (HTTP 429), like a Google quota error.
  int64_t project_quota_tensorcores = 0;
};

struct NodePage {
  std::vector<Node> nodes;
  std::string next_page_token;  // empty on the last page
};

struct NodeViewPage {
  std::vector<std::shared_ptr<const NodeView>> nodes;
  std::string next_page_token;  // empty on the last page
};

struct OperationPage {
  std::vector<Operation> operations;
  std::string next_page_token;
};

// Parsed page request (AIP-158): 0 = default; negative is INVALID_ARGUMENT; above max is coerced.
struct PageRequest {
  int page_size = 0;
  std::string page_token;
};

class NodeManager {
 public:
  NodeManager(db::Store& store, Scheduler& scheduler, const Catalog& catalog,
              NodeManagerOptions options);

  // Schedules the completion of every transition that was running when the process stopped.
  Status Recover();

  Result<Operation> Create(const NodeKey& key, const NodeSpec& spec);
  Result<Node> Get(const NodeKey& key) const;
  // The node with its rendered v2 JSON, from the read cache (filled from the store on a miss).
  Result<std::shared_ptr<const NodeView>> GetView(const NodeKey& key) const;
  // zone "-" lists every zone.
  Result<NodePage> List(const std::string& project, const std::string& zone,
                        const PageRequest& page) const;
  // List with each node's rendered JSON (through the read cache).
  Result<NodeViewPage> ListViews(const std::string& project, const std::string& zone,
                                 const PageRequest& page) const;
  Result<Operation> Delete(const NodeKey& key);
  Result<Operation> Start(const NodeKey& key);
  Result<Operation> Stop(const NodeKey& key);
  // `patch` holds new values for the masked fields (proto3 JSON names); `mask` are the updateMask
  // paths in snake_case or camelCase. Unsupported paths are INVALID_ARGUMENT.
  Result<Operation> Update(const NodeKey& key, const nlohmann::json& patch,
                           const std::vector<std::string>& mask);
  // {"guestAttributes": [{queryPath, queryValue: {items: [...]}, workerId?}]}, one per worker.
  Result<nlohmann::json> GuestAttributes(const NodeKey& key, const std::string& query_path,
                                         const std::vector<std::string>& worker_ids) const;

  Result<Operation> GetOperation(const std::string& name) const;
  Result<OperationPage> ListOperations(const std::string& project, const std::string& zone,
                                       const PageRequest& page) const;
  Status DeleteOperation(const std::string& name);
  Status CancelOperation(const std::string& name);

  // TensorCores held by nodes in `zone` (all projects; every state but gone).
  Result<int64_t> TensorCoresInZone(const std::string& zone) const;
  // Wipes every node and operation (POST /_emulator/reset).
  Status Reset();

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
  // TensorCores held per zone, kept in memory so a create does not scan the nodes table.
  int64_t ZoneUsed(const std::string& zone) const;
  void AddZoneUsed(const std::string& zone, int64_t delta);
  Status ReseedZoneUsage();  // recount from the store (startup, or after a failed commit)
  // TensorCores held by `project`, counted from the store on first use (inside a batcher body, so
  // the count is exact) and then kept in memory like the zone counters.
  Result<int64_t> ProjectUsed(db::Txn& txn, const std::string& project);
  void AddProjectUsed(const std::string& project, int64_t delta);

  db::Store& store_;
  Scheduler& scheduler_;
  const Catalog& catalog_;
  const NodeManagerOptions options_;
  db::NodeRepository nodes_;
  db::OperationRepository operations_;

  // Reads are served from here; bypassed during every batch of writes and Reset (node_cache.h).
  mutable NodeCache cache_;
  WriteBatcher batcher_;  // runs every mutation; declared after the repositories it uses
  mutable std::mutex zone_mu_;
  std::map<std::string, int64_t> zone_tensorcores_;  // guarded by zone_mu_
  // Only projects seen since the last reseed; absent = not counted yet. Guarded by zone_mu_.
  std::map<std::string, int64_t> project_tensorcores_;
  std::mutex observer_mu_;
  std::vector<StateObserver> observers_;  // guarded by observer_mu_
};

}  // namespace tpuemu::service
