#include "service/nodes/node_rows.h"

#include "service/common/clock.h"

namespace tpuemu::service {

db::NodeRow NodeToRow(const Node& node) {
  db::NodeRow row;
  row.name = node.key.Name();
  row.project = node.key.project;
  row.zone = node.key.zone;
  row.node_id = node.key.node_id;
  row.uid = node.uid;
  row.state = std::string(NodeStateName(node.state));
  row.accelerator_type = node.type.name;
  row.tensorcores = node.type.tensorcores;
  row.create_time = node.create_time;
  row.update_time = NowRfc3339();
  row.resource_json = NodeToStorage(node).dump();
  row.pending_operation = node.pending_operation;
  row.pending_due_ms = node.pending_due_ms;
  if (!node.queued_resource.empty()) row.queued_resource = node.queued_resource;
  row.zone_tensorcores = node.ZoneTensorCores();
  row.seq = node.seq;
  return row;
}

Result<Node> NodeFromRow(const db::NodeRow& row) {
  Node node;
  node.key = {row.project, row.zone, row.node_id};
  node.uid = row.uid;
  Result<NodeState> state = ParseNodeState(row.state);
  if (!state.ok())
    return Status::Internal("stored node " + row.name + ": " + state.status().message());
  node.state = *state;
  Result<engine::AcceleratorType> type = engine::FindAcceleratorType(row.accelerator_type);
  if (!type.ok())
    return Status::Internal("stored node " + row.name + ": " + type.status().message());
  node.type = *type;
  node.create_time = row.create_time;
  node.seq = row.seq;
  node.pending_operation = row.pending_operation;
  node.pending_due_ms = row.pending_due_ms;
  nlohmann::json stored = nlohmann::json::parse(row.resource_json, nullptr, false);
  if (!stored.is_object())
    return Status::Internal("stored node " + row.name + ": bad resource JSON");
  node.runtime_version = stored.value("runtimeVersion", "");
  node.fields = stored.value("fields", nlohmann::json::object());
  node.queued_resource = row.queued_resource.value_or("");
  node.multislice_node = stored.value("multisliceNode", false);
  node.capacity_released = stored.value("capacityReleased", false);
  if (auto it = stored.find("maintenance"); it != stored.end()) node.maintenance = *it;
  if (auto it = stored.find("upcomingMaintenance"); it != stored.end()) {
    node.upcoming_maintenance = *it;
  }
  if (auto it = stored.find("sandbox"); it != stored.end() && it->is_object()) {
    node.sandbox.decided = true;
    node.sandbox.enabled = it->value("enabled", false);
    node.sandbox.reason = it->value("reason", "");
    node.sandbox.ssh_port = it->value("sshPort", 22);
    node.sandbox.network = it->value("network", 1);
    node.sandbox.subnet = it->value("subnet", "");
  }
  return node;
}

Result<std::vector<Node>> NodesFromRows(const Result<std::vector<db::NodeRow>>& rows) {
  if (!rows.ok()) return rows.status();
  std::vector<Node> out;
  for (const db::NodeRow& row : *rows) {
    Result<Node> node = NodeFromRow(row);
    if (!node.ok()) return node.status();
    out.push_back(std::move(node).value());
  }
  return out;
}

}  // namespace tpuemu::service
