#include "api/queued_resource_codec.h"

#include <string>
#include <string_view>
#include <vector>

#include "api/node_codec.h"
#include "service/common/clock.h"

namespace tpuemu::api {
namespace {

using nlohmann::json;

Status QrTypeError(std::string_view field, std::string_view type, const json& value) {
  return Status::InvalidArgument("Invalid value at 'queued_resource." + std::string(field) + "' (" +
                                 std::string(type) + "), " + value.dump());
}

// The member `key` of `obj` when present and not null, checked to be an object.
Result<const json*> Message(const json& obj, const char* key, const std::string& field) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return static_cast<const json*>(nullptr);
  if (!it->is_object()) return QrTypeError(field, "TYPE_MESSAGE", *it);
  return &*it;
}

Result<std::string> String(const json& obj, const char* key, const std::string& field) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return std::string();
  if (!it->is_string()) return QrTypeError(field, "TYPE_STRING", *it);
  return it->get<std::string>();
}

Status DecodeMultislice(const json& params, const std::string& field, service::QrNodeRequest& out) {
  auto count = params.find("nodeCount");
  if (count != params.end() && !count->is_null()) {
    int64_t n = 0;
    if (count->is_number_integer()) {
      n = count->get<int64_t>();
    } else if (count->is_string()) {  // int32 may come as a string in proto3 JSON
      try {
        n = std::stoll(count->get<std::string>());
      } catch (const std::exception&) {
        return QrTypeError(field + ".node_count", "TYPE_INT32", *count);
      }
    } else {
      return QrTypeError(field + ".node_count", "TYPE_INT32", *count);
    }
    if (n < 0 || n > 4096) {
      return Status::InvalidArgument("Invalid value for field '" + field +
                                     ".nodeCount': " + std::to_string(n) + " (2 to 4096).");
    }
    out.node_count = static_cast<int>(n);
  }
  Result<std::string> prefix = String(params, "nodeIdPrefix", field + ".node_id_prefix");
  if (!prefix.ok()) return prefix.status();
  out.node_id_prefix = *prefix;
  if (out.node_count == 0 && out.node_id_prefix.empty()) {
    return Status::InvalidArgument("Field '" + field + ".nodeCount' is required.");
  }
  out.params_json = params;
  out.params_json.erase("nodeCount");
  out.params_json.erase("nodeIdPrefix");
  return Status::Ok();
}

Result<service::QrNodeRequest> DecodeNodeSpec(const json& spec, const std::string& field) {
  if (!spec.is_object()) return QrTypeError(field, "TYPE_MESSAGE", spec);
  service::QrNodeRequest out;
  Result<std::string> parent = String(spec, "parent", field + ".parent");
  if (!parent.ok()) return parent.status();
  out.parent = *parent;
  Result<std::string> node_id = String(spec, "nodeId", field + ".node_id");
  if (!node_id.ok()) return node_id.status();
  out.node_id = *node_id;
  for (const char* key : {"multisliceParams", "multiNodeParams"}) {
    Result<const json*> params = Message(spec, key, field + "." + key);
    if (!params.ok()) return params.status();
    if (*params != nullptr) TPUEMU_RETURN_IF_ERROR(DecodeMultislice(**params, field, out));
  }
  Result<const json*> node = Message(spec, "node", field + ".node");
  if (!node.ok()) return node.status();
  if (*node == nullptr) {
    return Status::InvalidArgument("Field '" + field + ".node' is required.");
  }
  Result<service::NodeSpec> decoded = DecodeNode(**node);
  if (!decoded.ok()) {
    return Status(decoded.status().code(), field + ".node: " + decoded.status().message());
  }
  out.node = std::move(decoded).value();
  out.node_json = **node;
  NodeEnumsToNames(out.node_json);
  return out;
}

Status DecodeQueueingPolicy(const json& policy, service::QueuedResourceSpec& out) {
  const std::string field = "queueingPolicy";
  int set = 0;
  for (const char* key : {"validUntilDuration", "validAfterDuration"}) {
    Result<std::string> text = String(policy, key, field + "." + key);
    if (!text.ok()) return text.status();
    if (text->empty()) continue;
    Result<int64_t> ms = service::ParseDurationMs(*text, field + "." + key);
    if (!ms.ok()) return ms.status();
    (std::string_view(key) == "validUntilDuration" ? out.valid_until_duration_ms
                                                   : out.valid_after_duration_ms) = *ms;
    ++set;
  }
  for (const char* key : {"validUntilTime", "validAfterTime"}) {
    Result<std::string> text = String(policy, key, field + "." + key);
    if (!text.ok()) return text.status();
    if (text->empty()) continue;
    Result<int64_t> ms = service::ParseRfc3339Ms(*text, field + "." + key);
    if (!ms.ok()) return ms.status();
    (std::string_view(key) == "validUntilTime" ? out.valid_until_ms : out.valid_after_ms) = *ms;
    ++set;
  }
  Result<const json*> interval = Message(policy, "validInterval", field + ".valid_interval");
  if (!interval.ok()) return interval.status();
  if (*interval != nullptr) {
    ++set;
    for (const char* key : {"startTime", "endTime"}) {
      const std::string name = field + ".validInterval." + key;
      Result<std::string> text = String(**interval, key, name);
      if (!text.ok()) return text.status();
      if (text->empty()) continue;
      Result<int64_t> ms = service::ParseRfc3339Ms(*text, name);
      if (!ms.ok()) return ms.status();
      (std::string_view(key) == "startTime" ? out.valid_after_ms : out.valid_until_ms) = *ms;
    }
  }
  if (set > 1) {
    return Status::InvalidArgument(
        "Invalid value for field 'queueingPolicy': give at most one of validUntilDuration, "
        "validUntilTime, validAfterDuration, validAfterTime and validInterval (a start and an end "
        "together are a validInterval).");
  }
  out.queueing_policy_json = policy;
  return Status::Ok();
}

// Names for enum-encoding=int, index = proto number.
const std::vector<std::string_view> kQrStates = {
    "STATE_UNSPECIFIED", "CREATING", "ACCEPTED",   "PROVISIONING", "FAILED",
    "DELETING",          "ACTIVE",   "SUSPENDING", "SUSPENDED",    "WAITING_FOR_RESOURCES"};
const std::vector<std::string_view> kInitiators = {"STATE_INITIATOR_UNSPECIFIED", "USER",
                                                   "SERVICE"};

void QrEnumToNumber(json& obj, const char* key, const std::vector<std::string_view>& names) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_string()) return;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i] == it->get_ref<const std::string&>()) {
      *it = static_cast<int>(i);
      return;
    }
  }
}

}  // namespace

Result<service::QueuedResourceSpec> DecodeQueuedResource(const json& body) {
  service::QueuedResourceSpec out;
  Result<const json*> tpu = Message(body, "tpu", "tpu");
  if (!tpu.ok()) return tpu.status();
  if (*tpu != nullptr) {
    auto specs = (*tpu)->find("nodeSpec");
    if (specs != (*tpu)->end() && !specs->is_null()) {
      if (!specs->is_array()) return QrTypeError("tpu.node_spec", "repeated NodeSpec", *specs);
      for (std::size_t i = 0; i < specs->size(); ++i) {
        Result<service::QrNodeRequest> spec =
            DecodeNodeSpec((*specs)[i], "tpu.nodeSpec[" + std::to_string(i) + "]");
        if (!spec.ok()) return spec.status();
        out.node_specs.push_back(std::move(spec).value());
      }
    }
  }
  int tiers = 0;
  struct TierKey {
    const char* key;
    service::QrTier tier;
  };
  for (TierKey t : {TierKey{"spot", service::QrTier::kSpot},
                    TierKey{"guaranteed", service::QrTier::kGuaranteed},
                    TierKey{"bestEffort", service::QrTier::kBestEffort}}) {
    Result<const json*> tier = Message(body, t.key, t.key);
    if (!tier.ok()) return tier.status();
    if (*tier == nullptr) continue;
    ++tiers;
    out.tier = t.tier;
    out.tier_json = **tier;
  }
  if (tiers > 1) {
    return Status::InvalidArgument(
        "Invalid value for field 'tier': give at most one of spot, guaranteed and bestEffort.");
  }
  if (out.tier == service::QrTier::kGuaranteed) {
    auto reserved = out.tier_json.find("reserved");
    if (reserved != out.tier_json.end() && !reserved->is_null()) {
      if (!reserved->is_boolean())
        return QrTypeError("guaranteed.reserved", "TYPE_BOOL", *reserved);
      out.reserved = reserved->get<bool>();
    }
    Result<std::string> min = String(out.tier_json, "minDuration", "guaranteed.min_duration");
    if (!min.ok()) return min.status();
    if (!min->empty()) {
      Result<int64_t> ms = service::ParseDurationMs(*min, "guaranteed.minDuration");
      if (!ms.ok()) return ms.status();
    }
  }
  Result<const json*> policy = Message(body, "queueingPolicy", "queueing_policy");
  if (!policy.ok()) return policy.status();
  if (*policy != nullptr) TPUEMU_RETURN_IF_ERROR(DecodeQueueingPolicy(**policy, out));
  Result<std::string> reservation = String(body, "reservationName", "reservation_name");
  if (!reservation.ok()) return reservation.status();
  out.reservation_name = *reservation;
  return out;
}

void QueuedResourceEnumsToInt(json& qr) {
  if (auto state = qr.find("state"); state != qr.end() && state->is_object()) {
    QrEnumToNumber(*state, "state", kQrStates);
    QrEnumToNumber(*state, "stateInitiator", kInitiators);
  }
  auto tpu = qr.find("tpu");
  if (tpu == qr.end() || !tpu->is_object() || !tpu->contains("nodeSpec")) return;
  for (json& spec : (*tpu)["nodeSpec"]) {
    if (spec.contains("node") && spec["node"].is_object()) NodeEnumsToInt(spec["node"]);
  }
}

}  // namespace tpuemu::api
