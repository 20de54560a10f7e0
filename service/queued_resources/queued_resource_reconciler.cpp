// The reconciler half of QueuedResourceManager (see the header): from what is stored — the
// queued resource, its nodes, the clock, the capacity — to the next state, written first and
// acted on after.
#include <algorithm>
#include <optional>

#include "service/common/clock.h"
#include "service/queued_resources/qr_event.h"
#include "service/queued_resources/qr_rows.h"
#include "service/queued_resources/queued_resource_manager.h"

namespace tpuemu::service {

// One reconcile: what Advance decided, for Act to carry out after the commit.
struct QueuedResourceManager::Step {
  QueuedResource qr;
  QrState previous = QrState::kUnspecified;
  std::vector<Node> nodes;  // the queued resource's nodes, as stored
  bool gone = false;        // the row was deleted
  bool create_nodes = false;
  bool delete_nodes = false;
  bool released = false;  // capacity went back to the zone
  // When a timed step (acceptance, validAfter, validUntil, the end of DELETING) needs another
  // reconcile; unset while it waits only for its nodes, whose changes wake it.
  std::optional<int64_t> wake_at;
};

namespace {

bool Has(const std::vector<Node>& nodes, NodeState state) {
  return std::any_of(nodes.begin(), nodes.end(), [&](const Node& n) { return n.state == state; });
}

const Node* FindNode(const std::vector<Node>& nodes, const std::string& id) {
  for (const Node& n : nodes) {
    if (n.key.node_id == id) return &n;
  }
  return nullptr;
}

}  // namespace

void QueuedResourceManager::ScheduleReconcile(const std::string& name, int64_t at_ms) {
  const bool now = at_ms <= NowUnixMs();
  if (now) {
    std::lock_guard lock(mu_);
    // One pending "now" reconcile per queued resource is enough: it reads everything afresh.
    if (!queued_.insert(name).second) return;
  }
  reconciles_.At(at_ms, [this, name, now] {
    if (now) {
      std::lock_guard lock(mu_);
      queued_.erase(name);
    }
    Reconcile(name);
  });
}

void QueuedResourceManager::Reconcile(const std::string& name) {
  Step step;
  bool loaded = false;
  TensorCoreQuota& quota = writes_.quota();
  PendingEvents events(writes_.event_sink());
  Status s = writes_.batcher().Run(
      [&](db::Txn& txn) -> Status {
        step = Step();
        Result<db::QueuedResourceRow> row = queued_resources_.Get(txn, name);
        if (!row.ok()) {
          return row.status().code() == StatusCode::kNotFound ? Status::Ok() : row.status();
        }
        Result<QueuedResource> qr = QueuedResourceFromRow(*row);
        if (!qr.ok()) return qr.status();
        step.qr = std::move(qr).value();
        step.previous = step.qr.state;
        Result<std::vector<Node>> nodes = NodesOf(txn, name);
        if (!nodes.ok()) return nodes.status();
        step.nodes = std::move(nodes).value();
        loaded = true;
        const int64_t held_before = step.qr.held_tensorcores;
        TPUEMU_RETURN_IF_ERROR(Advance(txn, step));
        // Last: the counts move only once every write of the body succeeded.
        const int64_t held_delta = step.qr.held_tensorcores - held_before;
        if (step.qr.reservation.empty()) quota.AddZone(step.qr.key.zone, held_delta);
        if (step.gone) quota.AddProject(step.qr.key.project, -step.qr.tensorcores);
        step.released = held_delta < 0;
        QueuedResource reported = step.qr;
        if (step.gone) reported.state = QrState::kUnspecified;
        if (reported.state != step.previous) {
          TPUEMU_RETURN_IF_ERROR(events.Append(txn, QueuedResourceEvent(reported, step.previous)));
        }
        return Status::Ok();
      },
      [&] {
        events.Publish();
        if (!loaded) return;
        if (step.gone) {
          QueuedResource gone = step.qr;
          gone.state = QrState::kUnspecified;
          Notify(gone, step.previous);
        } else {
          Notify(step.qr, step.previous);
        }
      });
  if (!s.ok()) {
    (void)quota.Reseed();
    // What the body reserved on the host was not committed.
    if (host_room_.release) host_room_.release(name);
    // The store refused (busy, I/O): try again rather than leave the queued resource stuck.
    ScheduleReconcile(name, NowUnixMs() + 100);
    return;
  }
  if (loaded) Act(step);
}

Status QueuedResourceManager::Advance(db::Txn& txn, Step& step) {
  QueuedResource& qr = step.qr;
  const int64_t now = NowUnixMs();
  OperationManager& operations = writes_.operations();
  auto complete_pending = [&](nlohmann::json response) -> Status {
    if (!qr.pending_operation) return Status::Ok();
    Result<Operation> op = operations.Load(txn, *qr.pending_operation);
    qr.pending_operation.reset();
    if (!op.ok()) return op.status().code() == StatusCode::kNotFound ? Status::Ok() : op.status();
    CompleteOperation(*op, std::move(response));
    return operations.Update(txn, *op);
  };
  auto rendered = [&] {
    nlohmann::json response = RenderQueuedResource(qr);
    response["@type"] = kQueuedResourceType;
    return response;
  };
  auto any_missing = [&] {
    for (const QrPlannedNode& planned : qr.nodes) {
      if (FindNode(step.nodes, planned.node_id) == nullptr) return true;
    }
    return false;
  };

  // A few passes: one reconcile may go CREATING -> ACCEPTED -> PROVISIONING, or ACTIVE ->
  // SUSPENDING and start deleting.
  for (int pass = 0; pass < 4; ++pass) {
    const QrState before = qr.state;
    switch (qr.state) {
      case QrState::kCreating:
        if (qr.due_ms && now < *qr.due_ms) {
          step.wake_at = qr.due_ms;
          break;
        }
        qr.state = QrState::kAccepted;
        qr.due_ms.reset();
        // The queueing policy's durations count from acceptance.
        if (qr.valid_after_duration_ms) qr.valid_after_ms = now + *qr.valid_after_duration_ms;
        if (qr.valid_until_duration_ms) qr.valid_until_ms = now + *qr.valid_until_duration_ms;
        TPUEMU_RETURN_IF_ERROR(complete_pending(rendered()));
        break;
      case QrState::kAccepted:
      case QrState::kWaitingForResources: {
        if (qr.valid_until_ms && now >= *qr.valid_until_ms) {
          qr.state = QrState::kFailed;
          qr.initiator = QrInitiator::kService;
          qr.error = Status::ResourceExhausted(
              "There was no capacity for queued resource '" + qr.key.Name() + "' in zone \"" +
              qr.key.zone + "\" before its validUntil time " +
              FormatRfc3339(WallTime(std::chrono::milliseconds(*qr.valid_until_ms))) + ".");
          qr.due_ms.reset();
          break;
        }
        if (qr.valid_after_ms && now < *qr.valid_after_ms) {
          qr.state = QrState::kAccepted;
          qr.due_ms = qr.valid_after_ms;
          step.wake_at = qr.due_ms;
          break;
        }
        Result<bool> room = HasRoom(txn, qr);
        if (!room.ok()) return room.status();
        if (*room && ReserveHost(qr)) {
          qr.state = QrState::kProvisioning;
          qr.held_tensorcores = qr.tensorcores;
          qr.due_ms.reset();
          step.create_nodes = true;
        } else {
          qr.state = QrState::kWaitingForResources;
          qr.due_ms = qr.valid_until_ms;
          step.wake_at = qr.due_ms;
        }
        break;
      }
      case QrState::kProvisioning:
        if (Has(step.nodes, NodeState::kPreempted)) {
          qr.state = QrState::kSuspending;
          qr.initiator = QrInitiator::kService;
          break;
        }
        if (!any_missing() && std::all_of(step.nodes.begin(), step.nodes.end(), [](const Node& n) {
              return n.state == NodeState::kReady;
            })) {
          qr.state = QrState::kActive;
          break;
        }
        step.create_nodes = any_missing();
        break;
      case QrState::kActive:
        if (Has(step.nodes, NodeState::kPreempted)) {
          qr.state = QrState::kSuspending;
          qr.initiator = QrInitiator::kService;
        } else if (any_missing() || Has(step.nodes, NodeState::kDeleting)) {
          // The user deleted a node: the rest of the slice goes too.
          qr.state = QrState::kSuspending;
          qr.initiator = QrInitiator::kUser;
        }
        break;
      case QrState::kSuspending:
      case QrState::kFailed:
      case QrState::kDeleting:
        if (!step.nodes.empty()) {
          step.delete_nodes = true;
          break;
        }
        qr.held_tensorcores = 0;
        if (qr.state == QrState::kSuspending) qr.state = QrState::kSuspended;
        if (qr.state == QrState::kDeleting) {
          if (qr.due_ms && now < *qr.due_ms) {
            step.wake_at = qr.due_ms;
            break;
          }
          TPUEMU_RETURN_IF_ERROR(complete_pending({{"@type", kEmptyType}}));
          TPUEMU_RETURN_IF_ERROR(queued_resources_.Delete(txn, qr.key.Name()));
          step.gone = true;
          return Status::Ok();
        }
        break;
      case QrState::kSuspended:
      case QrState::kUnspecified:
        break;
    }
    if (qr.state == before) break;
  }
  return queued_resources_.Update(txn, QueuedResourceToRow(qr));
}

Result<bool> QueuedResourceManager::HasRoom(db::Txn& txn, const QueuedResource& qr) const {
  if (!qr.reservation.empty()) {
    return reservations_.HasRoom(txn, qr.reservation, qr.tensorcores, qr.chips);
  }
  TensorCoreQuota& quota = writes_.quota();
  TPUEMU_RETURN_IF_ERROR(quota.Sync(txn, qr.key.zone));  // other replicas' writes, when shared
  return quota.ZoneCounted(qr.key.zone) + qr.tensorcores <= quota.ZoneCapacity(qr.key.zone);
}

bool QueuedResourceManager::ReserveHost(const QueuedResource& qr) {
  if (!host_room_.reserve) return true;
  std::vector<int> node_workers;
  for (const QrPlannedNode& planned : qr.nodes) {
    const NodeSpec& spec = qr.node_specs.at(static_cast<std::size_t>(planned.spec_index)).node;
    Result<engine::AcceleratorType> type =
        nodes_.CheckSpec({qr.key.project, qr.key.zone, planned.node_id}, spec);
    if (type.ok()) node_workers.push_back(type->workers);  // else its create fails anyway
  }
  return host_room_.reserve(qr.key.Name(), node_workers).ok();
}

void QueuedResourceManager::Act(const Step& step) {
  const QueuedResource& qr = step.qr;
  if (qr.state != QrState::kProvisioning && host_room_.release) host_room_.release(qr.key.Name());
  if (step.create_nodes) {
    for (const QrPlannedNode& planned : qr.nodes) {
      if (FindNode(step.nodes, planned.node_id) != nullptr) continue;
      NodeSpec spec = qr.node_specs.at(static_cast<std::size_t>(planned.spec_index)).node;
      spec.queued_resource = qr.key.Name();
      spec.multislice_node = planned.multislice;
      Result<Operation> op = nodes_.Create({qr.key.project, qr.key.zone, planned.node_id}, spec);
      Status failed = op.ok() ? op->error : op.status();
      if (!failed.ok()) {
        // A node of that name appeared since the create was accepted, or the node was refused:
        // the request cannot be honoured as it stands.
        MarkFailed(qr.key.Name(), Status(failed.code(), "Provisioning node '" + planned.node_id +
                                                            "' failed: " + failed.message()));
        return;
      }
    }
  }
  if (step.delete_nodes) {
    for (const Node& node : step.nodes) {
      const bool deletable = !node.pending_operation && (node.state == NodeState::kReady ||
                                                         node.state == NodeState::kStopped ||
                                                         node.state == NodeState::kPreempted);
      // The others are mid-transition; their completion reconciles this queued resource again.
      if (deletable) (void)nodes_.Delete(node.key);
    }
  }
  if (step.released) OnCapacityChanged(qr.key.zone);
  if (!step.gone && step.wake_at) ScheduleReconcile(qr.key.Name(), *step.wake_at);
}

void QueuedResourceManager::MarkFailed(const std::string& name, const Status& error) {
  Step step;
  bool changed = false;
  PendingEvents events(writes_.event_sink());
  Status s = writes_.batcher().Run(
      [&](db::Txn& txn) -> Status {
        Result<db::QueuedResourceRow> row = queued_resources_.Get(txn, name);
        if (!row.ok()) return Status::Ok();
        Result<QueuedResource> qr = QueuedResourceFromRow(*row);
        if (!qr.ok()) return qr.status();
        if (qr->state != QrState::kProvisioning) return Status::Ok();
        step.qr = std::move(qr).value();
        step.previous = step.qr.state;
        step.qr.state = QrState::kFailed;
        step.qr.initiator = QrInitiator::kService;
        step.qr.error = error;
        changed = true;
        TPUEMU_RETURN_IF_ERROR(queued_resources_.Update(txn, QueuedResourceToRow(step.qr)));
        return events.Append(txn, QueuedResourceEvent(step.qr, step.previous));
      },
      [&] {
        events.Publish();
        if (changed) Notify(step.qr, step.previous);
      });
  // FAILED deletes the nodes it made, then gives the capacity back.
  if (s.ok() && changed) ScheduleReconcile(name, 0);
}

}  // namespace tpuemu::service
