// A TPU VM node as the service keeps it, and its rendering as the Cloud TPU v2 `Node` resource.
//
// Client-settable fields (description, labels, networkConfig, ...) are kept as proto3 JSON in
// `fields` exactly as validated by api/; state, names, ids, endpoints and everything OUTPUT_ONLY
// are typed members and filled in by RenderNode the way the real server fills them
// (docs/api-fidelity.md §3 "Resources" and the [kcc] golden log).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "engine/hardware/hardware.h"

namespace tpuemu::service {

// google.cloud.tpu.v2.Node.State; the numbers are the proto's (enum-encoding=int).
enum class NodeState {
  kUnspecified = 0,
  kCreating = 1,
  kReady = 2,
  kRestarting = 3,
  kReimaging = 4,
  kDeleting = 5,
  kRepairing = 6,
  kStopped = 8,
  kStopping = 9,
  kStarting = 10,
  kPreempted = 11,
  kTerminated = 12,
  kHiding = 13,
  kHidden = 14,
  kUnhiding = 15,
  kUnknown = 16,
};
std::string_view NodeStateName(NodeState state);
Result<NodeState> ParseNodeState(std::string_view name);

// google.cloud.tpu.v2.Node.Health (no 2), as rendered: HEALTHY when READY, UNHEALTHY_MAINTENANCE
// while a maintenance event runs (service/faults/maintenance.h).
enum class NodeHealth {
  kUnspecified = 0,
  kHealthy = 1,
  kTimeout = 3,
  kUnhealthyTensorflow = 4,
  kUnhealthyMaintenance = 5,
};
std::string_view NodeHealthName(NodeHealth health);

// The full resource name pieces of a node: projects/{project}/locations/{zone}/nodes/{node_id}.
struct NodeKey {
  std::string project;
  std::string zone;
  std::string node_id;
  std::string Name() const;
  std::string Parent() const;  // projects/{project}/locations/{zone}
};

// What a client asks for in nodes.create (decoded and type-checked by api/).
struct NodeSpec {
  std::optional<std::string> accelerator_type;  // "v4-8"
  std::optional<std::string> config_type;       // acceleratorConfig.type: "V4" or "7"
  std::optional<std::string> config_topology;   // acceleratorConfig.topology: "2x2x1"
  std::string runtime_version;
  // description, labels, metadata, tags, networkConfig, schedulingConfig, dataDisks,
  // serviceAccount, shieldedInstanceConfig: proto3 JSON, already validated.
  nlohmann::json fields = nlohmann::json::object();

  // Set by the queued resource manager only (never decoded from a request): the queued resource
  // the node belongs to (it holds the node's project quota and capacity, so the node takes
  // none itself) and whether it is one slice of a multislice request.
  std::string queued_resource;
  bool multislice_node = false;
  // Set by a chaos rule (service/faults/chaos_rules.h): the create is accepted and its Operation
  // fails with this status, as a stockout does.
  Status injected_failure;
};

struct Node {
  NodeKey key;
  std::string uid;  // the int64 `id`, as a decimal string
  NodeState state = NodeState::kUnspecified;
  engine::AcceleratorType type;
  std::string runtime_version;
  std::string create_time;                           // RFC 3339
  int64_t seq = 0;                                   // creation order, for stable listing
  nlohmann::json fields = nlohmann::json::object();  // see NodeSpec::fields
  std::optional<std::string> pending_operation;      // operation driving an unfinished transition
  std::optional<int64_t> pending_due_ms;             // when that transition completes (unix ms)

  // Output-only fields of nodes a queued resource made (see NodeSpec).
  std::string queued_resource;
  bool multislice_node = false;
  // Faults (service/faults/). A preempted node gave its capacity back to the zone (it still
  // holds its project quota until deleted). `maintenance` is the running maintenance event
  // ({"untilMs", "operation", "workers", "kind"}) or null; `upcoming_maintenance` the v2alpha1
  // UpcomingMaintenance message or null.
  bool capacity_released = false;
  nlohmann::json maintenance;
  nlohmann::json upcoming_maintenance;
  // Whether the node's workers are Linux sandboxes you can SSH into (service/workers/), decided
  // at create and kept: tpuemud ran them (`enabled`), or could not and says why.
  struct Sandbox {
    bool decided = false;  // false for nodes made where sandboxes were never considered
    bool enabled = false;
    std::string reason;  // why not, when !enabled
    int ssh_port = 22;   // the port every worker's SSH answers on (its own address each)
    int network = 1;     // the workers' addresses are in 127.<network>.0.0/16 (one per tpuemud)
    // Their internal addresses' range ("10.<n>.0.0/16", one per tpuemud: WorkerSubnet); ""
    // for a node made before ranges were kept: 10.0.0.0/8, as records have.
    std::string subnet;
  };
  Sandbox sandbox;

  bool Preemptible() const;       // schedulingConfig.spot or .preemptible
  bool UnderMaintenance() const;  // a maintenance event is running
  // TensorCores the node takes from its zone's general capacity: none once preempted or when a
  // queued resource holds them.
  int64_t ZoneTensorCores() const;
  // TensorCores it holds against its project's quota: none when a queued resource holds them.
  int64_t ProjectTensorCores() const;
};

struct NodeRenderOptions {
  // Drops `health`, as the real server does in an Operation's response copy.
  bool for_operation = false;
  // Adds the v2alpha1-only fields (upcomingMaintenance).
  bool v2alpha1 = false;
};

// The `Node` JSON (proto3 names, enums as names).
nlohmann::json RenderNode(const Node& node, const NodeRenderOptions& options = {});

// Internal persistence form (everything RenderNode needs that is not a typed column).
nlohmann::json NodeToStorage(const Node& node);

// Worker `worker`'s internal address (networkEndpoints[].ipAddress): in the node's 10.x block of
// 10.0.0.0/8, the zone's subnet. When the workers are sandboxes it exists only on the slice's
// private network, inside namespaces tpuemud made (sandbox/slice_network.h).
std::string WorkerIpAddress(const Node& node, int worker);
// The range its internal addresses are blocks of: the sandbox's subnet, or "10.0.0.0/8".
std::string WorkerSubnet(const Node& node);
// Whether `cidr` is an IPv4 range "a.b.c.d/p" (p 8..20, host bits zero) internal addresses may
// be blocks of; the reason why not otherwise ("" when it is).
std::string SubnetProblem(const std::string& cidr);

// Where the host reaches worker `worker` of a sandboxed node (networkEndpoints[].accessConfig.
// externalIp, as an external IP is on Google Cloud): a loopback address of this host, distinct
// per worker, on which tpuemud listens for SSH and hands each connection into the worker — in
// 127.<network>.0.0/16, a block of 64 addresses per node by `seq`. "" for a node without sandboxes.
inline constexpr int kMaxSandboxedWorkersPerNode = 62;
std::string WorkerExternalAddress(const Node& node, int worker);

// The node's block: the client's `cidrBlock` if it gave one, else derived from `seq` (stable
// across restarts), sized for one address per worker.
std::string CidrBlockFor(int64_t seq, int workers);

}  // namespace tpuemu::service
