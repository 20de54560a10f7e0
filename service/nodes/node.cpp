#include "service/nodes/node.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdio>
#include <optional>

namespace tpuemu::service {
namespace {

using nlohmann::json;

struct StateName {
  NodeState state;
  std::string_view name;
};

constexpr std::array<StateName, 16> kStateNames = {{
    {NodeState::kUnspecified, "STATE_UNSPECIFIED"},
    {NodeState::kCreating, "CREATING"},
    {NodeState::kReady, "READY"},
    {NodeState::kRestarting, "RESTARTING"},
    {NodeState::kReimaging, "REIMAGING"},
    {NodeState::kDeleting, "DELETING"},
    {NodeState::kRepairing, "REPAIRING"},
    {NodeState::kStopped, "STOPPED"},
    {NodeState::kStopping, "STOPPING"},
    {NodeState::kStarting, "STARTING"},
    {NodeState::kPreempted, "PREEMPTED"},
    {NodeState::kTerminated, "TERMINATED"},
    {NodeState::kHiding, "HIDING"},
    {NodeState::kHidden, "HIDDEN"},
    {NodeState::kUnhiding, "UNHIDING"},
    {NodeState::kUnknown, "UNKNOWN"},
}};

// Host bits of the node's block: room for every worker plus network, gateway and broadcast.
int HostBits(int workers) {
  int bits = 8;
  while ((1 << bits) < workers + 3) ++bits;
  return bits;
}

struct Subnet {
  uint32_t base = 10u << 24;
  int prefix = 8;
};

// "a.b.c.d/p"; nothing when it is not one.
std::optional<Subnet> ParseSubnet(const std::string& cidr) {
  unsigned a = 0, b = 0, c = 0, d = 0;
  int prefix = 0;
  char tail = 0;
  if (std::sscanf(cidr.c_str(), "%u.%u.%u.%u/%d%c", &a, &b, &c, &d, &prefix, &tail) != 5 ||
      a > 255 || b > 255 || c > 255 || d > 255 || prefix < 0 || prefix > 32) {
    return std::nullopt;
  }
  return Subnet{(a << 24) | (b << 16) | (c << 8) | d, prefix};
}

Subnet SubnetOf(const Node& node) {
  if (!node.sandbox.enabled || node.sandbox.subnet.empty()) return Subnet{};
  return ParseSubnet(node.sandbox.subnet).value_or(Subnet{});
}

// The node's block of `subnet`, by its creation sequence.
uint32_t BlockBase(int64_t seq, int workers, Subnet subnet = {}) {
  const int room = 32 - subnet.prefix;
  const int bits = std::min(HostBits(workers), room - 1);
  uint32_t blocks = 1u << (room - bits);
  // Skip block 0 so no node sits on the subnet's own address.
  uint32_t index = static_cast<uint32_t>(seq % (blocks - 1)) + 1;
  return subnet.base | (index << bits);
}

std::string Dotted(uint32_t ip) {
  return std::to_string(ip >> 24) + "." + std::to_string((ip >> 16) & 255) + "." +
         std::to_string((ip >> 8) & 255) + "." + std::to_string(ip & 255);
}

// A sandboxed node's 64 loopback addresses: 127.<network>.x.y, 1,023 blocks by seq (block 0
// skipped). Up to kMaxSandboxedWorkersPerNode workers, from base + 2.
uint32_t SandboxBase(const Node& node) {
  const uint32_t block = static_cast<uint32_t>(node.seq % 1023) + 1;
  return (127u << 24) | (static_cast<uint32_t>(node.sandbox.network & 255) << 16) | (block << 6);
}

void CopyIfPresent(const json& from, json& to, const char* key) {
  auto it = from.find(key);
  if (it == from.end() || it->is_null()) return;
  if ((it->is_object() || it->is_array() || it->is_string()) && it->empty()) return;
  to[key] = *it;
}

}  // namespace

std::string_view NodeStateName(NodeState state) {
  for (const StateName& s : kStateNames) {
    if (s.state == state) return s.name;
  }
  return "STATE_UNSPECIFIED";
}

Result<NodeState> ParseNodeState(std::string_view name) {
  for (const StateName& s : kStateNames) {
    if (s.name == name) return s.state;
  }
  return Status::InvalidArgument("unknown node state '" + std::string(name) + "'");
}

std::string_view NodeHealthName(NodeHealth health) {
  switch (health) {
    case NodeHealth::kHealthy:
      return "HEALTHY";
    case NodeHealth::kTimeout:
      return "TIMEOUT";
    case NodeHealth::kUnhealthyTensorflow:
      return "UNHEALTHY_TENSORFLOW";
    case NodeHealth::kUnhealthyMaintenance:
      return "UNHEALTHY_MAINTENANCE";
    case NodeHealth::kUnspecified:
      break;
  }
  return "HEALTH_UNSPECIFIED";
}

bool Node::Preemptible() const {
  auto it = fields.find("schedulingConfig");
  if (it == fields.end() || !it->is_object()) return false;
  return it->value("spot", false) || it->value("preemptible", false);
}

bool Node::UnderMaintenance() const { return maintenance.is_object(); }

int64_t Node::ZoneTensorCores() const {
  return capacity_released || !queued_resource.empty() ? 0 : type.tensorcores;
}

int64_t Node::ProjectTensorCores() const { return queued_resource.empty() ? type.tensorcores : 0; }

std::string NodeKey::Name() const { return Parent() + "/nodes/" + node_id; }
std::string NodeKey::Parent() const { return "projects/" + project + "/locations/" + zone; }

std::string CidrBlockFor(int64_t seq, int workers) {
  return Dotted(BlockBase(seq, workers)) + "/" + std::to_string(32 - HostBits(workers));
}

json RenderNode(const Node& node, const NodeRenderOptions& options) {
  const engine::ChipSpec& spec = engine::Spec(node.type.generation);
  json out;
  out["name"] = node.key.Name();
  out["acceleratorType"] = node.type.name;
  out["acceleratorConfig"] = {{"type", spec.api_type}, {"topology", node.type.topology}};
  out["state"] = NodeStateName(node.state);
  out["runtimeVersion"] = node.runtime_version;
  std::string cidr = CidrBlockFor(node.seq, node.type.workers);
  if (node.sandbox.enabled) {
    // The block its workers' internal addresses are in, on its slice's network.
    const Subnet subnet = SubnetOf(node);
    cidr = Dotted(BlockBase(node.seq, node.type.workers, subnet)) + "/" +
           std::to_string(32 - std::min(HostBits(node.type.workers), 31 - subnet.prefix));
  }
  out["cidrBlock"] = node.fields.value("cidrBlock", cidr);
  out["createTime"] = node.create_time;
  out["id"] = node.uid;
  out["apiVersion"] = "V2";
  if (node.state == NodeState::kReady && !options.for_operation) {
    if (node.UnderMaintenance()) {
      out["health"] = NodeHealthName(NodeHealth::kUnhealthyMaintenance);
      out["healthDescription"] = "Under maintenance (" +
                                 node.maintenance.value("kind", std::string("maintenance")) +
                                 ") until " + node.maintenance.value("until", std::string()) + ".";
    } else {
      out["health"] = NodeHealthName(NodeHealth::kHealthy);
    }
  }
  if (!node.queued_resource.empty()) out["queuedResource"] = node.queued_resource;
  if (node.multislice_node) out["multisliceNode"] = true;
  if (options.v2alpha1 && node.upcoming_maintenance.is_object()) {
    out["upcomingMaintenance"] = node.upcoming_maintenance;
  }

  const json& f = node.fields;
  for (const char* key : {"description", "labels", "metadata", "tags", "dataDisks", "networkConfig",
                          "serviceAccount", "shieldedInstanceConfig"}) {
    CopyIfPresent(f, out, key);
  }
  out["schedulingConfig"] = f.value("schedulingConfig", json::object());

  bool external =
      f.contains("networkConfig") && f["networkConfig"].value("enableExternalIps", false);
  uint32_t base = BlockBase(node.seq, node.type.workers);
  // 8470 is the TPU runtime's port on a real worker; a sandbox whose SSH could not have port 22
  // shows the port it answers on instead (README "SSH into a TPU VM").
  const int port =
      node.sandbox.enabled && node.sandbox.ssh_port != 22 ? node.sandbox.ssh_port : 8470;
  json endpoints = json::array();
  for (int w = 0; w < node.type.workers; ++w) {
    json ep = {{"ipAddress", WorkerIpAddress(node, w)}, {"port", port}};
    if (node.sandbox.enabled) {
      // The host reaches a sandboxed worker only here (its internal address exists only on its
      // slice's network), so it has this external address whatever enableExternalIps says:
      // gcloud's ssh, which prefers it, reaches the worker and never tries a public one.
      ep["accessConfig"] = {{"externalIp", WorkerExternalAddress(node, w)}};
    } else if (external) {
      // A stable, documentation-range-looking public address per worker.
      uint32_t ext =
          (35u << 24) | ((base >> 2) & 0x00FFFF00u) | static_cast<uint32_t>((w + 2) & 255);
      ep["accessConfig"] = {{"externalIp", Dotted(ext)}};
    } else {
      ep["accessConfig"] = json::object();
    }
    endpoints.push_back(std::move(ep));
  }
  out["networkEndpoints"] = std::move(endpoints);
  if (node.sandbox.decided) {
    json sandbox = {{"enabled", node.sandbox.enabled}};
    if (!node.sandbox.enabled) sandbox["reason"] = node.sandbox.reason;
    out["workerSandbox"] = std::move(sandbox);
  }
  return out;
}

std::string WorkerIpAddress(const Node& node, int worker) {
  return Dotted(BlockBase(node.seq, node.type.workers, SubnetOf(node)) + 2 +
                static_cast<uint32_t>(worker));
}

std::string WorkerSubnet(const Node& node) {
  const Subnet s = SubnetOf(node);
  return Dotted(s.base) + "/" + std::to_string(s.prefix);
}

std::string SubnetProblem(const std::string& cidr) {
  const std::optional<Subnet> s = ParseSubnet(cidr);
  if (!s) return "'" + cidr + "' is not an IPv4 range a.b.c.d/prefix";
  if (s->prefix < 8 || s->prefix > 20) {
    return "'" + cidr + "': the prefix must be 8..20 (room for a node's block of 256 or more)";
  }
  if ((s->base & ((1u << (32 - s->prefix)) - 1)) != 0) {
    return "'" + cidr + "': its host bits must be zero";
  }
  return "";
}

std::string WorkerExternalAddress(const Node& node, int worker) {
  if (!node.sandbox.enabled) return "";
  return Dotted(SandboxBase(node) + 2 + static_cast<uint32_t>(worker));
}

json NodeToStorage(const Node& node) {
  json out = {{"runtimeVersion", node.runtime_version}, {"fields", node.fields}};
  if (node.multislice_node) out["multisliceNode"] = true;
  if (node.capacity_released) out["capacityReleased"] = true;
  if (node.maintenance.is_object()) out["maintenance"] = node.maintenance;
  if (node.upcoming_maintenance.is_object()) {
    out["upcomingMaintenance"] = node.upcoming_maintenance;
  }
  if (node.sandbox.decided) {
    out["sandbox"] = {{"enabled", node.sandbox.enabled},
                      {"reason", node.sandbox.reason},
                      {"sshPort", node.sandbox.ssh_port},
                      {"network", node.sandbox.network},
                      {"subnet", node.sandbox.subnet}};
  }
  return out;
}

}  // namespace tpuemu::service
