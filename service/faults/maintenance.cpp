#include "service/faults/maintenance.h"

#include <charconv>

#include "service/common/clock.h"

namespace tpuemu::service {
namespace {

using nlohmann::json;

std::string TimeOf(int64_t unix_ms) {
  return FormatRfc3339(WallTime(std::chrono::milliseconds(unix_ms)));
}

std::string Workers(const json& workers) {
  std::string out;
  for (const json& w : workers) out += (out.empty() ? "" : ",") + std::to_string(w.get<int>());
  return out;
}

Result<std::vector<int>> ParseWorkers(const Node& node, const std::vector<std::string>& ids) {
  std::vector<int> workers;
  for (const std::string& id : ids) {
    int w = -1;
    auto [end, ec] = std::from_chars(id.data(), id.data() + id.size(), w);
    if (ec != std::errc() || end != id.data() + id.size() || w < 0 || w >= node.type.workers) {
      return Status::InvalidArgument("Invalid value for field 'workerIds': '" + id + "'. Node '" +
                                     node.key.Name() + "' has workers 0.." +
                                     std::to_string(node.type.workers - 1) + ".");
    }
    workers.push_back(w);
  }
  if (workers.empty()) workers.push_back(0);  // gcloud: "By default, only the first worker"
  return workers;
}

std::vector<int> AllWorkers(const Node& node) {
  std::vector<int> workers;
  for (int w = 0; w < node.type.workers; ++w) workers.push_back(w);
  return workers;
}

FaultEvent StartedFault(const Node& node) {
  return {node.key.project, node.key.zone, node.key.Name(), "MAINTENANCE_STARTED",
          "maintenance (" + node.maintenance.value("kind", std::string()) + ") started on node " +
              node.key.node_id + " workers " + Workers(node.maintenance["workers"]) +
              "; health UNHEALTHY_MAINTENANCE until " +
              node.maintenance.value("until", std::string())};
}

// Amend's fault event for a maintenance event that started with the change.
db::EventRow StartedEvent(const Node& node) { return FaultEventRow(StartedFault(node)); }

}  // namespace

MaintenanceManager::MaintenanceManager(WritePath& writes, NodeManager& nodes,
                                       QueuedResourceManager& queued_resources,
                                       Scheduler& scheduler, MaintenanceOptions options,
                                       FaultListener listener)
    : writes_(writes),
      nodes_(nodes),
      queued_resources_(queued_resources),
      scheduler_(scheduler),
      options_(options),
      listener_(std::move(listener)) {}

Status MaintenanceManager::Recover() {
  ScheduleTimers(nodes_.recovered());
  return Status::Ok();
}

void MaintenanceManager::ScheduleTimers(const std::vector<Node>& nodes) {
  for (const Node& node : nodes) ScheduleTimers(node);
}

void MaintenanceManager::ScheduleTimers(const Node& node) {
  const NodeKey key = node.key;
  if (node.UnderMaintenance()) {
    scheduler_.At(node.maintenance.value("untilMs", int64_t{0}), [this, key] { End(key); });
  } else if (node.upcoming_maintenance.is_object()) {
    scheduler_.At(node.upcoming_maintenance.value("startMs", int64_t{0}),
                  [this, key] { StartScheduled(key); });
  }
}

Status MaintenanceManager::Begin(Node& node, const std::vector<int>& workers,
                                 const std::string& kind, const std::string& operation) {
  if (node.UnderMaintenance()) {
    return Status::FailedPrecondition("Node '" + node.key.Name() +
                                      "' is already under maintenance until " +
                                      node.maintenance.value("until", std::string()) + ".");
  }
  if (node.state != NodeState::kReady || node.pending_operation) {
    return Status::FailedPrecondition("Cannot start maintenance on node '" + node.key.Name() +
                                      "' in state " + std::string(NodeStateName(node.state)) +
                                      (node.pending_operation ? " with an operation running" : "") +
                                      ": it must be READY.");
  }
  const int64_t now = NowUnixMs();
  const int64_t until = now + options_.duration_ms;
  node.maintenance = {{"kind", kind},     {"workers", workers},     {"startMs", now},
                      {"untilMs", until}, {"until", TimeOf(until)}, {"operation", operation}};
  json upcoming = node.upcoming_maintenance.is_object()
                      ? node.upcoming_maintenance
                      : json{{"type", "UNSCHEDULED"}, {"canReschedule", false}};
  upcoming["windowStartTime"] = TimeOf(now);
  upcoming["windowEndTime"] = TimeOf(until);
  upcoming.erase("latestWindowStartTime");
  upcoming.erase("startMs");
  upcoming["maintenanceStatus"] = "ONGOING";
  node.upcoming_maintenance = std::move(upcoming);
  return Status::Ok();
}

void MaintenanceManager::Started(const Node& node) {
  ScheduleTimers(node);
  if (listener_) listener_(StartedFault(node));
}

Result<Operation> MaintenanceManager::Simulate(const NodeKey& key,
                                               const std::vector<std::string>& worker_ids) {
  Operation op = NewOperation(key.project, key.zone, key.Name(), "simulateMaintenanceEvent");
  Result<Node> node = nodes_.Amend(
      key,
      [&](Node& n, db::Txn& txn) -> Status {
        Result<std::vector<int>> workers = ParseWorkers(n, worker_ids);
        if (!workers.ok()) return workers.status();
        TPUEMU_RETURN_IF_ERROR(Begin(n, *workers, "simulateMaintenanceEvent", op.name));
        return writes_.operations().Insert(txn, op);
      },
      StartedEvent);
  if (!node.ok()) return node.status();
  Started(*node);
  return op;
}

Result<Operation> MaintenanceManager::Perform(const NodeKey& key) {
  Operation op = NewOperation(key.project, key.zone, key.Name(), "performMaintenance");
  Result<Node> node = nodes_.Amend(
      key,
      [&](Node& n, db::Txn& txn) -> Status {
        TPUEMU_RETURN_IF_ERROR(Begin(n, AllWorkers(n), "performMaintenance", op.name));
        return writes_.operations().Insert(txn, op);
      },
      StartedEvent);
  if (!node.ok()) return node.status();
  Started(*node);
  return op;
}

Result<Operation> MaintenanceManager::PerformOnQueuedResource(
    const QrKey& key, const std::vector<std::string>& node_names) {
  Result<QueuedResource> qr = queued_resources_.Get(key);
  if (!qr.ok()) return qr.status();
  Result<std::vector<Node>> nodes = nodes_.ListOfQueuedResource(key.Name());
  if (!nodes.ok()) return nodes.status();
  std::vector<NodeKey> targets;
  for (const std::string& wanted : node_names) {
    bool found = false;
    for (const Node& n : *nodes) {
      if (wanted == n.key.node_id || wanted == n.key.Name()) {
        targets.push_back(n.key);
        found = true;
      }
    }
    if (!found) {
      return Status::InvalidArgument("Invalid value for field 'nodeNames': '" + wanted +
                                     "' is not a node of queued resource '" + key.Name() + "'.");
    }
  }
  if (node_names.empty()) {
    for (const Node& n : *nodes) targets.push_back(n.key);
  }
  if (targets.empty()) {
    return Status::FailedPrecondition("Queued resource '" + key.Name() + "' has no nodes.");
  }
  Operation op =
      NewOperation(key.project, key.zone, key.Name(), "performMaintenanceQueuedResource");
  Status inserted =
      writes_.batcher().Run([&](db::Txn& txn) { return writes_.operations().Insert(txn, op); });
  if (!inserted.ok()) return inserted;
  std::vector<Node> started;
  for (const NodeKey& target : targets) {
    Result<Node> node = nodes_.Amend(
        target,
        [&](Node& n, db::Txn&) {
          return Begin(n, AllWorkers(n), "performMaintenanceQueuedResource", op.name);
        },
        StartedEvent);
    if (!node.ok()) {
      if (started.empty()) {
        // Nothing started: the Operation reports why.
        (void)writes_.batcher().Run([&](db::Txn& txn) {
          FailOperation(op, node.status());
          return writes_.operations().Update(txn, op);
        });
        return op;
      }
      continue;  // the others go ahead; that node was not READY
    }
    started.push_back(*node);
  }
  for (const Node& n : started) Started(n);
  return op;
}

Result<Node> MaintenanceManager::Schedule(const NodeKey& key, int64_t start_in_ms,
                                          const std::string& type, bool can_reschedule) {
  if (type != "SCHEDULED" && type != "UNSCHEDULED") {
    return Status::InvalidArgument("Invalid value for field 'type': '" + type +
                                   "' (SCHEDULED or UNSCHEDULED).");
  }
  if (start_in_ms < 0) {
    return Status::InvalidArgument("Invalid value for field 'startIn': it must not be negative.");
  }
  const int64_t start = NowUnixMs() + start_in_ms;
  const FaultEvent fault{
      key.project, key.zone, key.Name(), "MAINTENANCE_SCHEDULED",
      "maintenance (" + type + ") scheduled on node " + key.node_id + " at " + TimeOf(start)};
  Result<Node> node = nodes_.Amend(
      key,
      [&](Node& n, db::Txn&) -> Status {
        if (n.UnderMaintenance()) {
          return Status::FailedPrecondition("Node '" + key.Name() + "' is under maintenance now.");
        }
        n.upcoming_maintenance = {{"type", type},
                                  {"canReschedule", can_reschedule},
                                  {"windowStartTime", TimeOf(start)},
                                  {"windowEndTime", TimeOf(start + options_.duration_ms)},
                                  {"latestWindowStartTime", TimeOf(start)},
                                  {"maintenanceStatus", "PENDING"},
                                  {"startMs", start}};
        return Status::Ok();
      },
      [&](const Node&) { return FaultEventRow(fault); });
  if (!node.ok()) return node.status();
  ScheduleTimers(*node);
  if (listener_) listener_(fault);
  return node;
}

void MaintenanceManager::StartScheduled(const NodeKey& key) {
  Result<Node> node = nodes_.Amend(
      key,
      [&](Node& n, db::Txn&) -> Status {
        // Gone, already started by performMaintenance, or moved: nothing to do.
        if (!n.upcoming_maintenance.is_object() ||
            n.upcoming_maintenance.value("maintenanceStatus", "") != "PENDING" ||
            n.upcoming_maintenance.value("startMs", int64_t{0}) > NowUnixMs()) {
          return Status::Cancelled("nothing scheduled now");
        }
        return Begin(n, AllWorkers(n), "scheduled maintenance", "");
      },
      StartedEvent);
  if (node.ok()) Started(*node);
}

void MaintenanceManager::End(const NodeKey& key) {
  std::string operation;
  json workers;
  auto ended = [&] {
    return FaultEvent{key.project, key.zone, key.Name(), "MAINTENANCE_ENDED",
                      "maintenance ended on node " + key.node_id + " workers " + Workers(workers) +
                          "; health HEALTHY"};
  };
  Result<Node> node = nodes_.Amend(
      key,
      [&](Node& n, db::Txn& txn) -> Status {
        if (!n.UnderMaintenance() || n.maintenance.value("untilMs", int64_t{0}) > NowUnixMs()) {
          return Status::Cancelled("not due");  // ended already, or a newer event
        }
        operation = n.maintenance.value("operation", "");
        workers = n.maintenance["workers"];
        n.maintenance = nullptr;
        n.upcoming_maintenance = nullptr;
        if (operation.empty()) return Status::Ok();
        Result<Operation> op = writes_.operations().Load(txn, operation);
        if (!op.ok() || op->done) return Status::Ok();
        if (op->target == key.Name()) {
          json response = RenderNode(n, {.for_operation = true, .v2alpha1 = true});
          response["@type"] = kNodeType;
          CompleteOperation(*op, std::move(response));
          return writes_.operations().Update(txn, *op);
        }
        return Status::Ok();
      },
      [&](const Node&) { return FaultEventRow(ended()); });
  if (!node.ok()) return;
  if (!operation.empty() && node->queued_resource.size() > 0) {
    // A queued resource's Operation completes when the last of its events ended.
    Result<std::vector<Node>> siblings = nodes_.ListOfQueuedResource(node->queued_resource);
    bool others = false;
    if (siblings.ok()) {
      for (const Node& s : *siblings) {
        others =
            others || (s.UnderMaintenance() && s.maintenance.value("operation", "") == operation);
      }
    }
    if (!others) {
      Result<QueuedResource> qr = queued_resources_.Get(
          {node->key.project, node->key.zone,
           node->queued_resource.substr(node->queued_resource.rfind('/') + 1)});
      (void)writes_.batcher().Run([&](db::Txn& txn) -> Status {
        Result<Operation> op = writes_.operations().Load(txn, operation);
        if (!op.ok() || op->done) return Status::Ok();
        json response = qr.ok() ? RenderQueuedResource(*qr) : json::object();
        response["@type"] = kQueuedResourceType;
        CompleteOperation(*op, std::move(response));
        return writes_.operations().Update(txn, *op);
      });
    }
  }
  if (listener_) listener_(ended());
}

}  // namespace tpuemu::service
