// WritePath: the one path every node, Operation and queued resource write takes — the group-commit
// WriteBatcher that runs the write bodies, the OperationManager that writes their Operations, the
// TensorCoreQuota those bodies check and count, and the EventSink their events go to — as one
// object, so the managers that share it (NodeManager, QueuedResourceManager and its reconciler,
// MaintenanceManager, ReservationBook) are handed it by the composition root instead of reaching
// through one another for its parts. Sharing one batcher is what orders a queued resource's
// read-check-write with the nodes' writes.
//
// Ownership: the store and catalog are borrowed and must outlive the write path; the write path
// owns the batcher, the Operations and the quota, and borrows the event sink (null = no events,
// as in unit tests). Whoever queues bodies that point into an object must stop the batcher
// (batcher().Stop(), which may be called more than once) before that object goes: NodeManager's
// destructor does, for its own.
//
// Threads: the batcher and quota are thread-safe on their own; the OperationManager keeps no state.
// SetEventSink must be called before the first write.
#pragma once

#include "db/store.h"
#include "service/catalog/catalog.h"
#include "service/common/event_sink.h"
#include "service/common/write_batcher.h"
#include "service/nodes/quota.h"
#include "service/operations/operation_manager.h"

namespace tpuemu::service {

struct WritePathOptions {
  QuotaLimits quota;
  // Other replicas write the same store (PostgreSQL): the quota counts from the store
  // (TensorCoreQuota::SetShared).
  bool shared_store = false;
};

class WritePath {
 public:
  // (Defined here: a .cpp of its own would be one more unit compiling nlohmann/json.)
  WritePath(db::Store& store, const Catalog& catalog, WritePathOptions options)
      : quota_(store, catalog, options.quota),
        batcher_(store),
        operations_(store, batcher_, catalog) {
    quota_.SetShared(options.shared_store);
  }
  // Stops the batcher first: its queued bodies may use the Operations and the quota.
  ~WritePath() { batcher_.Stop(); }
  WritePath(const WritePath&) = delete;
  WritePath& operator=(const WritePath&) = delete;

  // Runs every write body, many in one transaction.
  WriteBatcher& batcher() { return batcher_; }
  const WriteBatcher& batcher() const { return batcher_; }
  // The Operations of nodes and queued resources (operations.get, list, delete, cancel; the
  // Txn& forms inside a batcher body).
  OperationManager& operations() { return operations_; }
  const OperationManager& operations() const { return operations_; }
  // The TensorCore counts and checks of creates (nodes and queued resources).
  TensorCoreQuota& quota() { return quota_; }
  const TensorCoreQuota& quota() const { return quota_; }

  // Where each state change writes its event, in the change's transaction (borrowed; null = no
  // events).
  void SetEventSink(EventSink* sink) { event_sink_ = sink; }
  EventSink* event_sink() const { return event_sink_; }

 private:
  TensorCoreQuota quota_;            // thread-safe on its own
  WriteBatcher batcher_;             // stopped by the destructor before the rest goes
  OperationManager operations_;      // writes through batcher_
  EventSink* event_sink_ = nullptr;  // set before the first write
};

}  // namespace tpuemu::service
