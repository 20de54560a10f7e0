#include "service/queued_resources/queued_resource.h"

#include <array>

namespace tpuemu::service {
namespace {

using nlohmann::json;

struct StateName {
  QrState state;
  std::string_view name;
  const char* data;  // the state_data oneof member for this state, or nullptr
};

constexpr std::array<StateName, 10> kStates = {{
    {QrState::kUnspecified, "STATE_UNSPECIFIED", nullptr},
    {QrState::kCreating, "CREATING", "creatingData"},
    {QrState::kAccepted, "ACCEPTED", "acceptedData"},
    {QrState::kProvisioning, "PROVISIONING", "provisioningData"},
    {QrState::kFailed, "FAILED", "failedData"},
    {QrState::kDeleting, "DELETING", "deletingData"},
    {QrState::kActive, "ACTIVE", "activeData"},
    {QrState::kSuspending, "SUSPENDING", "suspendingData"},
    {QrState::kSuspended, "SUSPENDED", "suspendedData"},
    {QrState::kWaitingForResources, "WAITING_FOR_RESOURCES", nullptr},
}};

const StateName& Find(QrState state) {
  for (const StateName& s : kStates) {
    if (s.state == state) return s;
  }
  return kStates[0];
}

json OptionalMs(const std::optional<int64_t>& ms) { return ms ? json(*ms) : json(); }

std::optional<int64_t> MsFrom(const json& stored, const char* key) {
  auto it = stored.find(key);
  if (it == stored.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<int64_t>();
}

}  // namespace

std::string_view QrStateName(QrState state) { return Find(state).name; }

Result<QrState> ParseQrState(std::string_view name) {
  for (const StateName& s : kStates) {
    if (s.name == name) return s.state;
  }
  return Status::InvalidArgument("unknown queued resource state '" + std::string(name) + "'");
}

std::string_view QrInitiatorName(QrInitiator initiator) {
  switch (initiator) {
    case QrInitiator::kUser:
      return "USER";
    case QrInitiator::kService:
      return "SERVICE";
    case QrInitiator::kUnspecified:
      break;
  }
  return "STATE_INITIATOR_UNSPECIFIED";
}

std::string_view QrTierName(QrTier tier) {
  switch (tier) {
    case QrTier::kSpot:
      return "spot";
    case QrTier::kGuaranteed:
      return "guaranteed";
    case QrTier::kBestEffort:
      return "best-effort";
    case QrTier::kOnDemand:
      break;
  }
  return "on-demand";
}

std::string QrKey::Name() const { return Parent() + "/queuedResources/" + id; }
std::string QrKey::Parent() const { return "projects/" + project + "/locations/" + zone; }

std::string QueuedResource::NodeName(std::size_t i) const {
  return key.Parent() + "/nodes/" + nodes.at(i).node_id;
}

json RenderQueuedResource(const QueuedResource& qr, bool v2alpha1) {
  json out;
  out["name"] = qr.key.Name();
  out["createTime"] = qr.create_time;
  json specs = json::array();
  for (const QrNodeRequest& r : qr.node_specs) {
    json spec = {{"parent", r.parent.empty() ? qr.key.Parent() : r.parent},
                 {"node", r.node_json.is_object() ? r.node_json : json::object()}};
    if (r.node_count > 0) {
      json params = r.params_json.is_object() ? r.params_json : json::object();
      params["nodeCount"] = r.node_count;
      if (!r.node_id_prefix.empty()) params["nodeIdPrefix"] = r.node_id_prefix;
      spec[v2alpha1 ? "multiNodeParams" : "multisliceParams"] = std::move(params);
    } else {
      spec["nodeId"] = r.node_id;
    }
    specs.push_back(std::move(spec));
  }
  out["tpu"] = {{"nodeSpec", std::move(specs)}};
  switch (qr.tier) {
    case QrTier::kSpot:
      out["spot"] = qr.tier_json.is_object() ? qr.tier_json : json::object();
      break;
    case QrTier::kGuaranteed:
      out["guaranteed"] = qr.tier_json.is_object() ? qr.tier_json : json::object();
      break;
    case QrTier::kBestEffort:
      out["bestEffort"] = json::object();
      break;
    case QrTier::kOnDemand:
      break;
  }
  if (qr.queueing_policy_json.is_object() && !qr.queueing_policy_json.empty()) {
    out["queueingPolicy"] = qr.queueing_policy_json;
  }
  if (!qr.reservation_name.empty()) out["reservationName"] = qr.reservation_name;
  json state = {{"state", QrStateName(qr.state)}};
  if (qr.initiator != QrInitiator::kUnspecified) {
    state["stateInitiator"] = QrInitiatorName(qr.initiator);
  }
  if (const char* data = Find(qr.state).data) {
    state[data] = json::object();
    if (qr.state == QrState::kFailed && !qr.error.ok()) {
      // google.rpc.Status: the numeric code, as inside an Operation.
      state[data]["error"] = {{"code", static_cast<int>(qr.error.code())},
                              {"message", qr.error.message()}};
    }
  }
  out["state"] = std::move(state);
  return out;
}

json NodeSpecToJson(const NodeSpec& spec) {
  json out = {{"runtimeVersion", spec.runtime_version}, {"fields", spec.fields}};
  if (spec.accelerator_type) out["acceleratorType"] = *spec.accelerator_type;
  if (spec.config_type) out["configType"] = *spec.config_type;
  if (spec.config_topology) out["configTopology"] = *spec.config_topology;
  return out;
}

NodeSpec NodeSpecFromJson(const json& j) {
  NodeSpec spec;
  spec.runtime_version = j.value("runtimeVersion", "");
  spec.fields = j.value("fields", json::object());
  if (j.contains("acceleratorType"))
    spec.accelerator_type = j["acceleratorType"].get<std::string>();
  if (j.contains("configType")) spec.config_type = j["configType"].get<std::string>();
  if (j.contains("configTopology")) spec.config_topology = j["configTopology"].get<std::string>();
  return spec;
}

json QueuedResourceToStorage(const QueuedResource& qr) {
  json specs = json::array();
  for (const QrNodeRequest& r : qr.node_specs) {
    specs.push_back({{"parent", r.parent},
                     {"nodeId", r.node_id},
                     {"nodeCount", r.node_count},
                     {"nodeIdPrefix", r.node_id_prefix},
                     {"node", NodeSpecToJson(r.node)},
                     {"nodeJson", r.node_json},
                     {"paramsJson", r.params_json}});
  }
  json nodes = json::array();
  for (const QrPlannedNode& n : qr.nodes) {
    nodes.push_back({{"nodeId", n.node_id}, {"multislice", n.multislice}, {"spec", n.spec_index}});
  }
  json out = {{"initiator", static_cast<int>(qr.initiator)},
              {"nodeSpecs", std::move(specs)},
              {"nodes", std::move(nodes)},
              {"acceleratorType", qr.type.name},
              {"chips", qr.chips},
              {"tier", static_cast<int>(qr.tier)},
              {"tierJson", qr.tier_json},
              {"reservationName", qr.reservation_name},
              {"queueingPolicy", qr.queueing_policy_json},
              {"validAfterMs", OptionalMs(qr.valid_after_ms)},
              {"validUntilMs", OptionalMs(qr.valid_until_ms)},
              {"validAfterDurationMs", OptionalMs(qr.valid_after_duration_ms)},
              {"validUntilDurationMs", OptionalMs(qr.valid_until_duration_ms)}};
  if (!qr.error.ok()) {
    out["error"] = {{"code", static_cast<int>(qr.error.code())}, {"message", qr.error.message()}};
  }
  return out;
}

Status QueuedResourceFromStorage(const json& stored, QueuedResource& qr) {
  if (!stored.is_object()) return Status::Internal("bad resource JSON");
  qr.initiator = static_cast<QrInitiator>(stored.value("initiator", 0));
  for (const json& s : stored.value("nodeSpecs", json::array())) {
    QrNodeRequest r;
    r.parent = s.value("parent", "");
    r.node_id = s.value("nodeId", "");
    r.node_count = s.value("nodeCount", 0);
    r.node_id_prefix = s.value("nodeIdPrefix", "");
    r.node = NodeSpecFromJson(s.value("node", json::object()));
    r.node_json = s.value("nodeJson", json());
    r.params_json = s.value("paramsJson", json());
    qr.node_specs.push_back(std::move(r));
  }
  for (const json& n : stored.value("nodes", json::array())) {
    qr.nodes.push_back({n.value("nodeId", ""), n.value("multislice", false), n.value("spec", 0)});
  }
  Result<engine::AcceleratorType> type =
      engine::FindAcceleratorType(stored.value("acceleratorType", ""));
  if (!type.ok()) return type.status();
  qr.type = *type;
  qr.chips = stored.value("chips", int64_t{0});
  qr.tier = static_cast<QrTier>(stored.value("tier", 0));
  qr.tier_json = stored.value("tierJson", json());
  qr.reservation_name = stored.value("reservationName", "");
  qr.queueing_policy_json = stored.value("queueingPolicy", json());
  qr.valid_after_ms = MsFrom(stored, "validAfterMs");
  qr.valid_until_ms = MsFrom(stored, "validUntilMs");
  qr.valid_after_duration_ms = MsFrom(stored, "validAfterDurationMs");
  qr.valid_until_duration_ms = MsFrom(stored, "validUntilDurationMs");
  if (auto it = stored.find("error"); it != stored.end() && it->is_object()) {
    qr.error = Status(static_cast<StatusCode>(it->value("code", 2)), it->value("message", ""));
  }
  return Status::Ok();
}

}  // namespace tpuemu::service
