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
#include "engine/hardware.h"

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
};

// The v2 `Node` JSON (proto3 names, enums as names). `for_operation` drops `health`, as the real
// server does in an Operation's response copy.
nlohmann::json RenderNode(const Node& node, bool for_operation = false);

// Internal persistence form (everything RenderNode needs that is not a typed column).
nlohmann::json NodeToStorage(const Node& node);

// The node's block: the client's `cidrBlock` if it gave one, else derived from `seq` (stable
// across restarts), sized for one address per worker.
std::string CidrBlockFor(int64_t seq, int workers);

}  // namespace tpuemu::service
