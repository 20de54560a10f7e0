#include "service/queued_resources/qr_plan.h"

#include <cctype>
#include <set>

#include "service/common/validation.h"

namespace tpuemu::service {
namespace {

using nlohmann::json;

Status ValidateQueuedResourceId(const std::string& id) {
  bool ok = !id.empty() && id.size() <= 63;
  for (unsigned char c : id) {
    ok = ok &&
         (std::isalnum(c) || c == '_' || c == '.' || c == '~' || c == '+' || c == '%' || c == '-');
  }
  if (ok) return Status::Ok();
  return Status::InvalidArgument("Invalid value for field 'queuedResourceId': '" + id +
                                 "'. Must be 1-63 characters of ^[A-Za-z0-9_.~+%-]+$.");
}

// The tier's scheduling, written into the node as the real service reports it.
void ApplyScheduling(const QueuedResourceSpec& spec, json& fields) {
  json& scheduling = fields["schedulingConfig"];
  if (!scheduling.is_object()) scheduling = json::object();
  if (spec.tier == QrTier::kSpot) scheduling["spot"] = true;
  if (spec.tier == QrTier::kBestEffort) scheduling["preemptible"] = true;
  if (spec.reserved || !spec.reservation_name.empty()) scheduling["reserved"] = true;
}

}  // namespace

Result<QueuedResource> PlanQueuedResource(const QrKey& key, const QueuedResourceSpec& spec,
                                          const NodeManager& nodes) {
  TPUEMU_RETURN_IF_ERROR(ValidateProjectId(key.project));
  TPUEMU_RETURN_IF_ERROR(ValidateQueuedResourceId(key.id));
  if (spec.node_specs.empty()) {
    return Status::InvalidArgument(
        "Field 'tpu.nodeSpec' is required: give at least one node spec with 'parent', 'node' "
        "and 'nodeId' or 'multisliceParams'.");
  }
  QueuedResource qr;
  qr.key = key;
  qr.tier = spec.tier;
  qr.tier_json = spec.tier_json;
  qr.reservation_name = spec.reservation_name;
  qr.queueing_policy_json = spec.queueing_policy_json;
  qr.valid_after_ms = spec.valid_after_ms;
  qr.valid_until_ms = spec.valid_until_ms;
  qr.valid_after_duration_ms = spec.valid_after_duration_ms;
  qr.valid_until_duration_ms = spec.valid_until_duration_ms;
  std::set<std::string> seen;
  for (std::size_t i = 0; i < spec.node_specs.size(); ++i) {
    QrNodeRequest request = spec.node_specs[i];
    const std::string field = "tpu.nodeSpec[" + std::to_string(i) + "]";
    if (request.parent.empty()) request.parent = key.Parent();
    if (request.parent != key.Parent()) {
      return Status::InvalidArgument("Invalid value for field '" + field + ".parent': '" +
                                     request.parent +
                                     "'. It must be the queued resource's own "
                                     "parent, " +
                                     key.Parent() + ".");
    }
    const bool multislice = request.node_count != 0 || !request.node_id_prefix.empty();
    if (multislice == !request.node_id.empty()) {
      return Status::InvalidArgument("Exactly one of '" + field + ".nodeId' and '" + field +
                                     ".multisliceParams' must be set.");
    }
    std::vector<std::string> ids;
    if (!multislice) {
      ids.push_back(request.node_id);
    } else {
      if (request.node_count < 2) {
        return Status::InvalidArgument(
            "Invalid value for field '" + field + ".multisliceParams.nodeCount': " +
            std::to_string(request.node_count) + ". It must be greater than 1.");
      }
      const std::string prefix = request.node_id_prefix.empty() ? key.id : request.node_id_prefix;
      for (int n = 0; n < request.node_count; ++n) ids.push_back(prefix + "-" + std::to_string(n));
    }
    for (const std::string& id : ids) {
      if (Status s = ValidateNodeId(id); !s.ok()) {
        return Status::InvalidArgument(
            "Invalid node id '" + id + "' from '" + field +
            (multislice ? ".multisliceParams.nodeIdPrefix" : ".nodeId") +
            "' (the queued resource id when no prefix is given): node ids must match "
            "^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$.");
      }
      if (!seen.insert(id).second) {
        return Status::InvalidArgument("Node '" + id + "' is requested twice in 'tpu.nodeSpec'.");
      }
    }
    ApplyScheduling(spec, request.node.fields);
    Result<engine::AcceleratorType> type =
        nodes.CheckSpec({key.project, key.zone, ids.front()}, request.node);
    if (!type.ok()) {
      return Status(type.status().code(), field + ".node: " + type.status().message());
    }
    if (i == 0) qr.type = *type;
    // The node as echoed back names its type both ways, as the service's Node does.
    if (!request.node_json.is_object()) request.node_json = json::object();
    if (!request.node_json.contains("acceleratorType")) {
      request.node_json["acceleratorType"] = type->name;
    }
    if (!request.node_json.contains("acceleratorConfig")) {
      request.node_json["acceleratorConfig"] = {{"type", engine::Spec(type->generation).api_type},
                                                {"topology", type->topology}};
    }
    for (const std::string& id : ids) {
      qr.nodes.push_back({id, multislice, static_cast<int>(i)});
      qr.tensorcores += type->tensorcores;
      qr.chips += type->chips;
    }
    qr.node_specs.push_back(std::move(request));
  }
  return qr;
}

}  // namespace tpuemu::service
