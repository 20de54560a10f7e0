#include "service/faults/zone_capacity.h"

#include "service/common/not_found.h"

namespace tpuemu::service {

ZoneCapacity::ZoneCapacity(db::Store& store, TensorCoreQuota& quota, const Catalog& catalog,
                           std::function<void(const std::string&)> on_changed,
                           FaultListener listener)
    : store_(store),
      settings_(store),
      quota_(quota),
      catalog_(catalog),
      on_changed_(std::move(on_changed)),
      listener_(std::move(listener)) {}

Status ZoneCapacity::Load() {
  Result<std::map<std::string, int64_t>> stored = settings_.ListZoneCapacities();
  if (!stored.ok()) return stored.status();
  for (const auto& [zone, tensorcores] : *stored) quota_.SetZoneCapacity(zone, tensorcores);
  return Status::Ok();
}

Status ZoneCapacity::CheckZone(const std::string& zone) const {
  if (catalog_.FindZone(zone) == nullptr) return ResourceNotFound("zones/" + zone);
  return Status::Ok();
}

nlohmann::json ZoneCapacity::Render(const std::string& zone) const {
  return {{"zone", zone},
          {"capacityTensorcores", quota_.ZoneCapacity(zone)},
          {"usedTensorcores", quota_.ZoneUsed(zone)}};
}

Result<nlohmann::json> ZoneCapacity::Set(const std::string& zone, int64_t tensorcores) {
  TPUEMU_RETURN_IF_ERROR(CheckZone(zone));
  if (tensorcores < 0) {
    return Status::InvalidArgument(
        "Invalid value for field 'tensorcores': " + std::to_string(tensorcores) + " (0 or more).");
  }
  TPUEMU_RETURN_IF_ERROR(Change(
      zone, [&](db::Txn& txn) { return settings_.SetZoneCapacity(txn, zone, tensorcores); },
      [&] { quota_.SetZoneCapacity(zone, tensorcores); }));
  return Render(zone);
}

Result<nlohmann::json> ZoneCapacity::Clear(const std::string& zone) {
  TPUEMU_RETURN_IF_ERROR(CheckZone(zone));
  TPUEMU_RETURN_IF_ERROR(Change(
      zone, [&](db::Txn& txn) { return settings_.ClearZoneCapacity(txn, zone); },
      [&] { quota_.ClearZoneCapacity(zone); }));
  return Render(zone);
}

Result<nlohmann::json> ZoneCapacity::Get(const std::string& zone) const {
  TPUEMU_RETURN_IF_ERROR(CheckZone(zone));
  return Render(zone);
}

nlohmann::json ZoneCapacity::List() const {
  nlohmann::json zones = nlohmann::json::array();
  for (const Zone& z : catalog_.zones()) zones.push_back(Render(z.id));
  return {{"zones", std::move(zones)}};
}

Status ZoneCapacity::Change(const std::string& zone, const std::function<Status(db::Txn&)>& write,
                            const std::function<void()>& apply) {
  FaultEvent fault;
  PendingEvents events(event_sink_);
  Status s = store_.Transaction([&](db::Txn& txn) -> Status {
    TPUEMU_RETURN_IF_ERROR(write(txn));
    apply();  // the message names the capacity in effect after the change
    fault = {"*", zone, "zones/" + zone, "CAPACITY",
             "zone " + zone + " capacity is now " + std::to_string(quota_.ZoneCapacity(zone)) +
                 " TensorCores (" + std::to_string(quota_.ZoneUsed(zone)) + " in use)"};
    return events.Append(txn, FaultEventRow(fault));
  });
  if (!s.ok()) {
    quota_.ClearZoneCapacity(zone);  // back to what the store holds
    (void)Load();
    return s;
  }
  events.Publish();
  if (listener_) listener_(fault);
  if (on_changed_) on_changed_(zone);
  return Status::Ok();
}

}  // namespace tpuemu::service
