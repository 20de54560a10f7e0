// QueuedResourceManager: the Cloud TPU API's queuedResources — create, get, list, delete, reset —
// and the reconciler that walks each queued resource through its life cycle
// (qr_state_machine.h): accepting it, waiting for capacity and for its queueing policy,
// provisioning its nodes through NodeManager, noticing preemptions and deleted nodes, suspending,
// deleting.
//
// Every client call validates, then writes the queued resource and its Operation in ONE
// transaction and returns the Operation. The reconciler is level-triggered: Reconcile(name)
// loads the queued resource and its nodes, decides the next state from what it finds, writes it
// in one transaction, and only then acts on nodes (creates or deletes them through NodeManager's
// public calls, which are idempotent by name). It runs on the manager's own scheduler thread
// (each reconcile waits for its write batch, which must not hold up node transitions on the
// daemon's shared scheduler) when a timer is due (acceptance, validAfter, validUntil), when a node
// of the queued resource changes state (OnNodeStateChanged), and, for the queued ones of a zone in
// creation order, when capacity frees up there (a node deleted or preempted, a queued resource
// releasing its capacity, OnCapacityChanged). Since everything is persisted before it is acted on,
// Recover() after a restart (kill -9 in the middle of provisioning included) simply reconciles
// every queued resource again.
//
// Capacity: a queued resource takes the capacity of all its nodes at once when it goes
// PROVISIONING (from its reservation, else from its zone; TensorCoreQuota and ReservationBook),
// in the same write batch that checked there was room, so its node creates cannot be refused for
// capacity; it gives the capacity back once its nodes are gone. It holds the project quota from
// its create until it is deleted.
//
// Ownership and threads: the store, write path, node manager, reservation book and catalog are
// borrowed and must outlive the manager; Stop() (or the destructor) ends its reconciles. Writes
// run on the write path's WriteBatcher, the one the nodes' writes run on (so they are ordered with
// node and Operation writes), and write their Operations, quota and events through it too;
// observers_ and queued_ are guarded by mu_. Public calls are thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"
#include "db/node_repository.h"
#include "db/queued_resource_repository.h"
#include "db/request_id_repository.h"
#include "db/store.h"
#include "service/catalog/catalog.h"
#include "service/common/page_token.h"
#include "service/common/scheduler.h"
#include "service/nodes/node_manager.h"
#include "service/operations/operation.h"
#include "service/queued_resources/queued_resource.h"
#include "service/queued_resources/reservations.h"
#include "service/write_path/write_path.h"

namespace tpuemu::service {

inline constexpr char kQueuedResourceType[] =
    "type.googleapis.com/google.cloud.tpu.v2.QueuedResource";

struct QueuedResourceOptions {
  int64_t accept_delay_ms = 500;      // CREATING -> ACCEPTED
  int64_t transition_delay_ms = 500;  // the least time DELETING takes
};

struct QueuedResourcePage {
  std::vector<QueuedResource> queued_resources;
  std::string next_page_token;  // empty on the last page
};

class QueuedResourceManager {
 public:
  QueuedResourceManager(db::Store& store, WritePath& writes, NodeManager& nodes,
                        ReservationBook& reservations, const Catalog& catalog,
                        QueuedResourceOptions options);
  QueuedResourceManager(const QueuedResourceManager&) = delete;
  QueuedResourceManager& operator=(const QueuedResourceManager&) = delete;

  // Reconciles every stored queued resource (after a restart).
  Status Recover();
  // Stops reconciling (waits for a running reconcile, drops the scheduled ones). App::Stop calls
  // it before the store closes; the destructor does too.
  void Stop() { reconciles_.Stop(); }

  // Errors: INVALID_ARGUMENT naming the field (ids, nodeSpec, tier, queueingPolicy,
  // reservationName, the node itself as nodes.create checks it), NOT_FOUND for an unknown zone,
  // ALREADY_EXISTS for a taken queued resource or node name, RESOURCE_EXHAUSTED past the
  // project quota. A `request_id` seen before in the zone returns that request's Operation (or
  // ALREADY_EXISTS when it named another target).
  Result<Operation> Create(const QrKey& key, const QueuedResourceSpec& spec,
                           const std::string& request_id);
  Result<QueuedResource> Get(const QrKey& key) const;
  // In creation order, 100 a page by default; zone "-" lists every zone.
  Result<QueuedResourcePage> List(const std::string& project, const std::string& zone,
                                  const PageRequest& page) const;
  // The rules of CheckDelete (qr_state_machine.h); with force, its nodes are deleted first.
  Result<Operation> Delete(const QrKey& key, bool force, const std::string& request_id);
  // Back to ACCEPTED (CheckReset); its queueing policy's durations count again from now.
  Result<Operation> Reset(const QrKey& key);

  // Hooked to NodeManager's state observer: reconciles the node's queued resource, and the
  // zone's queue when a standalone node freed capacity.
  void OnNodeStateChanged(const Node& node, NodeState previous);
  // Reconciles the queued ones of `zone` ("-" = every zone), oldest first: call it when the
  // zone's capacity grew or a reservation was added.
  void OnCapacityChanged(const std::string& zone);
  // Forgets what is scheduled in memory (POST /_emulator/reset).
  void Clear();

  // The host's capacity for worker sandboxes (service/workers/host_capacity.h): once the zone
  // has room, `reserve(name, workers of each planned node)` holds the host's share of all the
  // queued resource's nodes at once (their creates take it); not OK and the queued resource waits
  // in WAITING_FOR_RESOURCES, as for a zone out of TensorCores, until OnCapacityChanged. Once it
  // is no longer PROVISIONING, `release(name)` gives back what its nodes did not take. Unset:
  // only the zone's capacity counts. Set before Recover.
  struct HostRoom {
    std::function<Status(const std::string& name, const std::vector<int>& node_workers)> reserve;
    std::function<void(const std::string& name)> release;
  };
  void SetHostRoom(HostRoom room) { host_room_ = std::move(room); }

  // Called after each committed state change, on the write batcher's thread, in commit order;
  // a deleted queued resource is reported with state STATE_UNSPECIFIED. Must be quick and must
  // not call back into the manager.
  using StateObserver = std::function<void(const QueuedResource& qr, QrState previous)>;
  void AddStateObserver(StateObserver observer);

  // The node manager that makes and deletes its nodes (borrowed; api/ asks it for WriteBacklog).
  const NodeManager& nodes() const { return nodes_; }

 private:
  struct Step;
  void ScheduleReconcile(const std::string& name, int64_t at_ms);
  void Reconcile(const std::string& name);
  // Decides and writes the next state of `qr` (inside a batcher body).
  Status Advance(db::Txn& txn, Step& step);
  void Act(const Step& step);
  void MarkFailed(const std::string& name, const Status& error);
  Result<std::vector<Node>> NodesOf(db::Txn& txn, const std::string& name) const;
  Result<bool> HasRoom(db::Txn& txn, const QueuedResource& qr) const;
  // host_room_.reserve for every planned node of `qr` (true when unset).
  bool ReserveHost(const QueuedResource& qr);
  void Notify(const QueuedResource& qr, QrState previous);

  WritePath& writes_;
  NodeManager& nodes_;
  ReservationBook& reservations_;
  const Catalog& catalog_;
  const QueuedResourceOptions options_;
  db::QueuedResourceRepository queued_resources_;
  db::NodeRepository node_rows_;
  db::RequestIdRepository request_ids_;
  HostRoom host_room_;  // set before Recover

  std::mutex mu_;
  std::vector<StateObserver> observers_;  // guarded by mu_
  std::set<std::string> queued_;          // reconciles already scheduled for now; guarded by mu_
  // Reconciles run here, on a thread of their own. Declared last: stopped first.
  Scheduler reconciles_;
};

}  // namespace tpuemu::service
