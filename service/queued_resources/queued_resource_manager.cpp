// The client-facing half of QueuedResourceManager: create, get, list, delete, reset and the
// hooks. The reconciler is queued_resource_reconciler.cpp.
#include "service/queued_resources/queued_resource_manager.h"

#include "service/common/clock.h"
#include "service/common/not_found.h"
#include "service/common/page_token.h"
#include "service/nodes/node_rows.h"
#include "service/queued_resources/qr_event.h"
#include "service/queued_resources/qr_plan.h"
#include "service/queued_resources/qr_rows.h"
#include "service/queued_resources/qr_state_machine.h"

namespace tpuemu::service {
namespace {

// A retried request: true when `request_id` was seen in the zone before, with `*op` set to the
// Operation that request started; false when it is new; ALREADY_EXISTS when it named another
// target or verb.
Result<bool> Replayed(db::Txn& txn, const db::RequestIdRepository& ids,
                      OperationManager& operations, const QrKey& key, const std::string& request_id,
                      std::string_view verb, Operation* op) {
  if (request_id.empty()) return false;
  Result<db::RequestIdRow> seen = ids.Get(txn, key.Parent(), request_id);
  if (!seen.ok()) {
    if (seen.status().code() == StatusCode::kNotFound) return false;
    return seen.status();
  }
  if (seen->target != key.Name() || seen->verb != verb) {
    return Status::AlreadyExists("requestId '" + request_id + "' was already used to " +
                                 seen->verb + " " + seen->target + ".");
  }
  Result<Operation> started = operations.Load(txn, seen->operation);
  if (!started.ok()) return started.status();
  *op = std::move(started).value();
  return true;
}

Status Remember(db::Txn& txn, const db::RequestIdRepository& ids, const QrKey& key,
                const std::string& request_id, const Operation& op) {
  if (request_id.empty()) return Status::Ok();
  return ids.Insert(txn, {key.Parent(), request_id, op.verb, key.Name(), op.name, NowUnixMs()});
}

}  // namespace

QueuedResourceManager::QueuedResourceManager(db::Store& store, WritePath& writes,
                                             NodeManager& nodes, ReservationBook& reservations,
                                             const Catalog& catalog, QueuedResourceOptions options)
    : writes_(writes),
      nodes_(nodes),
      reservations_(reservations),
      catalog_(catalog),
      options_(options),
      queued_resources_(store),
      node_rows_(store) {}

Status QueuedResourceManager::Recover() {
  Result<std::vector<db::QueuedResourceRow>> rows = queued_resources_.ListInZone("-");
  if (!rows.ok()) return rows.status();
  for (const db::QueuedResourceRow& row : *rows) ScheduleReconcile(row.name, 0);
  return Status::Ok();
}

Result<Operation> QueuedResourceManager::Create(const QrKey& key, const QueuedResourceSpec& spec,
                                                const std::string& request_id) {
  if (catalog_.FindZone(key.zone) == nullptr) return ResourceNotFound(key.Parent());
  Result<QueuedResource> planned = PlanQueuedResource(key, spec, nodes_);
  if (!planned.ok()) return planned.status();
  QueuedResource qr = std::move(planned).value();
  qr.state = QrState::kCreating;
  qr.initiator = QrInitiator::kUser;
  qr.create_time = NowRfc3339();
  Operation op = NewOperation(key.project, key.zone, key.Name(), "create");
  qr.pending_operation = op.name;
  qr.due_ms = NowUnixMs() + options_.accept_delay_ms;
  const bool wants_reservation = spec.reserved || !spec.reservation_name.empty();
  const std::string requested_reservation =
      spec.reservation_name.empty() ? key.Parent() + "/reservations/-" : spec.reservation_name;
  OperationManager& operations = writes_.operations();
  TensorCoreQuota& quota = writes_.quota();
  bool created = false;
  PendingEvents events(writes_.event_sink());
  Status s = writes_.batcher().Run(
      [&](db::Txn& txn) -> Status {
        Result<bool> replayed =
            Replayed(txn, request_ids_, operations, key, request_id, "create", &op);
        if (!replayed.ok()) return replayed.status();
        if (*replayed) return Status::Ok();
        Result<db::QueuedResourceRow> existing = queued_resources_.Get(txn, key.Name());
        if (existing.ok()) {
          return Status::AlreadyExists("Resource '" + key.Name() + "' already exists");
        }
        if (existing.status().code() != StatusCode::kNotFound) return existing.status();
        for (std::size_t i = 0; i < qr.nodes.size(); ++i) {
          Result<db::NodeRow> node = node_rows_.Get(txn, qr.NodeName(i));
          if (node.ok()) {
            return Status::AlreadyExists("Resource '" + qr.NodeName(i) +
                                         "' already exists (a queued resource creates its "
                                         "nodes; choose node ids no node has)");
          }
        }
        TPUEMU_RETURN_IF_ERROR(quota.CheckProject(txn, key.project, qr.tensorcores,
                                                  "queued resource " + key.id + ": " +
                                                      std::to_string(qr.nodes.size()) + " x " +
                                                      qr.type.name));
        if (wants_reservation) {
          Result<std::string> reservation =
              reservations_.Resolve(txn, key.project, key.zone, requested_reservation, qr.type);
          if (!reservation.ok()) return reservation.status();
          qr.reservation = *reservation;
        }
        Result<int64_t> seq = queued_resources_.Insert(txn, QueuedResourceToRow(qr));
        if (!seq.ok()) return seq.status();
        qr.seq = *seq;
        TPUEMU_RETURN_IF_ERROR(operations.Insert(txn, op));
        TPUEMU_RETURN_IF_ERROR(Remember(txn, request_ids_, key, request_id, op));
        TPUEMU_RETURN_IF_ERROR(events.Append(txn, QueuedResourceEvent(qr, QrState::kUnspecified)));
        quota.AddProject(key.project, qr.tensorcores);  // last
        created = true;
        return Status::Ok();
      },
      [&] {
        events.Publish();
        if (created) Notify(qr, QrState::kUnspecified);
      });
  if (!s.ok()) {
    if (created) (void)quota.Reseed();
    return s;
  }
  if (created) ScheduleReconcile(key.Name(), *qr.due_ms);
  return op;
}

Result<QueuedResource> QueuedResourceManager::Get(const QrKey& key) const {
  Result<db::QueuedResourceRow> row = queued_resources_.Get(key.Name());
  if (!row.ok()) return NotFoundAs(row.status(), key.Name());
  return QueuedResourceFromRow(*row);
}

Result<QueuedResourcePage> QueuedResourceManager::List(const std::string& project,
                                                       const std::string& zone,
                                                       const PageRequest& page) const {
  TPUEMU_RETURN_IF_ERROR(catalog_.CheckListLocation(project, zone));
  Result<int64_t> after = DecodePageToken(kSeqPageToken, page.page_token);
  if (!after.ok()) return after.status();
  const int size = PageSize(page, kDefaultPageSize);
  Result<std::vector<db::QueuedResourceRow>> rows =
      queued_resources_.List(project, zone, *after, size + 1);
  if (!rows.ok()) return rows.status();
  QueuedResourcePage out;
  for (int i = 0; i < static_cast<int>(rows->size()) && i < size; ++i) {
    Result<QueuedResource> qr = QueuedResourceFromRow((*rows)[i]);
    if (!qr.ok()) return qr.status();
    out.queued_resources.push_back(std::move(qr).value());
  }
  if (static_cast<int>(rows->size()) > size) {
    out.next_page_token = EncodePageToken(kSeqPageToken, out.queued_resources.back().seq);
  }
  return out;
}

Result<Operation> QueuedResourceManager::Delete(const QrKey& key, bool force,
                                                const std::string& request_id) {
  Operation op = NewOperation(key.project, key.zone, key.Name(), "delete");
  QueuedResource qr;
  QrState previous = QrState::kUnspecified;
  bool changed = false;
  OperationManager& operations = writes_.operations();
  PendingEvents events(writes_.event_sink());
  Status s = writes_.batcher().Run(
      [&](db::Txn& txn) -> Status {
        Result<bool> replayed =
            Replayed(txn, request_ids_, operations, key, request_id, "delete", &op);
        if (!replayed.ok()) return replayed.status();
        if (*replayed) return Status::Ok();
        Result<db::QueuedResourceRow> row = queued_resources_.Get(txn, key.Name());
        if (!row.ok()) return NotFoundAs(row.status(), key.Name());
        Result<QueuedResource> loaded = QueuedResourceFromRow(*row);
        if (!loaded.ok()) return loaded.status();
        qr = std::move(loaded).value();
        Result<std::vector<Node>> nodes = NodesOf(txn, key.Name());
        if (!nodes.ok()) return nodes.status();
        TPUEMU_RETURN_IF_ERROR(CheckDelete(key.Name(), qr.state, !nodes->empty(), force));
        previous = qr.state;
        qr.state = QrState::kDeleting;
        qr.initiator = QrInitiator::kUser;
        qr.pending_operation = op.name;
        qr.due_ms = NowUnixMs() + options_.transition_delay_ms;
        TPUEMU_RETURN_IF_ERROR(queued_resources_.Update(txn, QueuedResourceToRow(qr)));
        TPUEMU_RETURN_IF_ERROR(operations.Insert(txn, op));
        TPUEMU_RETURN_IF_ERROR(Remember(txn, request_ids_, key, request_id, op));
        if (qr.state != previous) {
          TPUEMU_RETURN_IF_ERROR(events.Append(txn, QueuedResourceEvent(qr, previous)));
        }
        changed = true;
        return Status::Ok();
      },
      [&] {
        events.Publish();
        if (changed) Notify(qr, previous);
      });
  if (!s.ok()) return s;
  // Now, so that its nodes start going at once; the row goes once they are gone and due_ms passed.
  if (changed) ScheduleReconcile(key.Name(), 0);
  return op;
}

Result<Operation> QueuedResourceManager::Reset(const QrKey& key) {
  Operation op = NewOperation(key.project, key.zone, key.Name(), "reset");
  QueuedResource qr;
  QrState previous = QrState::kUnspecified;
  OperationManager& operations = writes_.operations();
  PendingEvents events(writes_.event_sink());
  Status s = writes_.batcher().Run(
      [&](db::Txn& txn) -> Status {
        Result<db::QueuedResourceRow> row = queued_resources_.Get(txn, key.Name());
        if (!row.ok()) return NotFoundAs(row.status(), key.Name());
        Result<QueuedResource> loaded = QueuedResourceFromRow(*row);
        if (!loaded.ok()) return loaded.status();
        qr = std::move(loaded).value();
        Result<std::vector<Node>> nodes = NodesOf(txn, key.Name());
        if (!nodes.ok()) return nodes.status();
        TPUEMU_RETURN_IF_ERROR(CheckReset(key.Name(), qr.state, !nodes->empty()));
        previous = qr.state;
        qr.state = QrState::kAccepted;
        qr.initiator = QrInitiator::kUser;
        qr.error = Status::Ok();
        const int64_t now = NowUnixMs();
        if (qr.valid_after_duration_ms) qr.valid_after_ms = now + *qr.valid_after_duration_ms;
        if (qr.valid_until_duration_ms) qr.valid_until_ms = now + *qr.valid_until_duration_ms;
        qr.due_ms.reset();
        TPUEMU_RETURN_IF_ERROR(queued_resources_.Update(txn, QueuedResourceToRow(qr)));
        nlohmann::json response = RenderQueuedResource(qr);
        response["@type"] = kQueuedResourceType;
        CompleteOperation(op, std::move(response));
        if (qr.state != previous) {
          TPUEMU_RETURN_IF_ERROR(events.Append(txn, QueuedResourceEvent(qr, previous)));
        }
        return operations.Insert(txn, op);
      },
      [&] {
        events.Publish();
        Notify(qr, previous);
      });
  if (!s.ok()) return s;
  ScheduleReconcile(key.Name(), 0);
  return op;
}

Result<std::vector<Node>> QueuedResourceManager::NodesOf(db::Txn& txn,
                                                         const std::string& name) const {
  return NodesFromRows(node_rows_.ListByQueuedResource(txn, name));
}

void QueuedResourceManager::OnNodeStateChanged(const Node& node, NodeState previous) {
  if (!node.queued_resource.empty()) {
    ScheduleReconcile(node.queued_resource, 0);
    return;
  }
  const bool freed = node.state == NodeState::kUnspecified || node.state == NodeState::kPreempted;
  if (freed && previous != NodeState::kUnspecified) OnCapacityChanged(node.key.zone);
}

void QueuedResourceManager::OnCapacityChanged(const std::string& zone) {
  {
    std::lock_guard lock(mu_);
    if (!queued_.insert("zone:" + zone).second) return;
  }
  reconciles_.At(0, [this, zone] {
    {
      std::lock_guard lock(mu_);
      queued_.erase("zone:" + zone);
    }
    Result<std::vector<db::QueuedResourceRow>> rows = queued_resources_.ListInZone(zone);
    if (!rows.ok()) return;
    for (const db::QueuedResourceRow& row : *rows) {
      Result<QrState> state = ParseQrState(row.state);
      if (state.ok() && IsQueued(*state)) Reconcile(row.name);
    }
  });
}

void QueuedResourceManager::Clear() {
  reconciles_.Clear();
  std::lock_guard lock(mu_);
  queued_.clear();
}

void QueuedResourceManager::AddStateObserver(StateObserver observer) {
  std::lock_guard lock(mu_);
  if (observer) observers_.push_back(std::move(observer));
}

void QueuedResourceManager::Notify(const QueuedResource& qr, QrState previous) {
  if (qr.state == previous) return;
  std::lock_guard lock(mu_);
  for (const StateObserver& observer : observers_) observer(qr, previous);
}

}  // namespace tpuemu::service
