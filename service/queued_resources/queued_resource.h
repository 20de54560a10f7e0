// A Cloud TPU QueuedResource as the service keeps it — what the client asked for, the nodes that
// request expands to, where it stands in its life cycle — and its rendering as the v2 JSON
// resource (reference: google/cloud/tpu/v2/cloud_tpu.proto, message QueuedResource; the
// emulator's behaviour is written up in docs/faults.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "engine/hardware/hardware.h"
#include "service/nodes/node.h"

namespace tpuemu::service {

// QueuedResourceState.State; the numbers are the proto's.
enum class QrState {
  kUnspecified = 0,
  kCreating = 1,
  kAccepted = 2,
  kProvisioning = 3,
  kFailed = 4,
  kDeleting = 5,
  kActive = 6,
  kSuspending = 7,
  kSuspended = 8,
  kWaitingForResources = 9,
};
std::string_view QrStateName(QrState state);
Result<QrState> ParseQrState(std::string_view name);

// QueuedResourceState.StateInitiator.
enum class QrInitiator { kUnspecified = 0, kUser = 1, kService = 2 };
std::string_view QrInitiatorName(QrInitiator initiator);

// The `tier` oneof (bestEffort is v2alpha1's); kOnDemand when none is set.
enum class QrTier { kOnDemand, kSpot, kGuaranteed, kBestEffort };
std::string_view QrTierName(QrTier tier);  // "on-demand", "spot", "guaranteed", "best-effort"

// projects/{project}/locations/{zone}/queuedResources/{id}.
struct QrKey {
  std::string project;
  std::string zone;
  std::string id;
  std::string Name() const;
  std::string Parent() const;  // projects/{project}/locations/{zone}
};

// One entry of tpu.nodeSpec as the client sent it (decoded and type-checked by api/).
struct QrNodeRequest {
  std::string parent;          // empty = the queued resource's own parent
  std::string node_id;         // nodeId, or empty for a multislice request
  int node_count = 0;          // multisliceParams (v2alpha1: multiNodeParams).nodeCount; 0 = none
  std::string node_id_prefix;  // multisliceParams.nodeIdPrefix; empty = the queued resource id
  NodeSpec node;               // the decoded `node`
  nlohmann::json node_json;    // `node` as given, echoed back in tpu.nodeSpec[].node
  nlohmann::json params_json;  // the multislice params as given (workloadType kept), or null
};

// What a client asks for in queuedResources.create (decoded by api/).
struct QueuedResourceSpec {
  std::vector<QrNodeRequest> node_specs;
  QrTier tier = QrTier::kOnDemand;
  nlohmann::json tier_json;  // the tier message as given ({} for spot), or null
  bool reserved = false;     // v2alpha1 guaranteed.reserved: any reservation of the project
  std::string reservation_name;
  // queueingPolicy, relative durations not yet resolved (they count from acceptance).
  std::optional<int64_t> valid_after_ms;  // absolute unix ms (validAfterTime, interval start)
  std::optional<int64_t> valid_until_ms;  // absolute unix ms
  std::optional<int64_t> valid_after_duration_ms;
  std::optional<int64_t> valid_until_duration_ms;
  nlohmann::json queueing_policy_json;  // as given, or null
};

// One node the queued resource provisions.
struct QrPlannedNode {
  std::string node_id;
  bool multislice = false;
  int spec_index = 0;  // into QueuedResource::node_specs
};

struct QueuedResource {
  QrKey key;
  int64_t seq = 0;
  std::string create_time;
  QrState state = QrState::kUnspecified;
  QrInitiator initiator = QrInitiator::kUnspecified;
  Status error;  // failedData.error when FAILED

  std::vector<QrNodeRequest> node_specs;
  std::vector<QrPlannedNode> nodes;
  engine::AcceleratorType type;  // of the first node spec (lists show it)
  int64_t tensorcores = 0;       // of every planned node together
  int64_t chips = 0;
  QrTier tier = QrTier::kOnDemand;
  nlohmann::json tier_json;
  std::string reservation_name;  // as requested ("…/reservations/-" included)
  std::string reservation;       // the reservation resolved at create, or empty
  nlohmann::json queueing_policy_json;
  std::optional<int64_t> valid_after_ms;  // resolved, absolute
  std::optional<int64_t> valid_until_ms;
  std::optional<int64_t> valid_after_duration_ms;  // kept so a reset can resolve them again
  std::optional<int64_t> valid_until_duration_ms;

  int64_t held_tensorcores = 0;  // capacity held now (zone's or reservation's)
  std::optional<std::string> pending_operation;
  std::optional<int64_t> due_ms;  // next timed step (acceptance, validAfter, validUntil, …)

  // The node's full name, for planned node `i`.
  std::string NodeName(std::size_t i) const;
};

// The QueuedResource JSON: v2 names (tpu.nodeSpec[].multisliceParams); `v2alpha1` renames it
// multiNodeParams, as that version spells it. Enums as names.
nlohmann::json RenderQueuedResource(const QueuedResource& qr, bool v2alpha1 = false);

// Persistence form (everything but the row's typed columns) and back.
nlohmann::json QueuedResourceToStorage(const QueuedResource& qr);
Status QueuedResourceFromStorage(const nlohmann::json& stored, QueuedResource& qr);

// A NodeSpec as JSON (the planned nodes' specs are stored with the queued resource) and back.
nlohmann::json NodeSpecToJson(const NodeSpec& spec);
NodeSpec NodeSpecFromJson(const nlohmann::json& json);

}  // namespace tpuemu::service
