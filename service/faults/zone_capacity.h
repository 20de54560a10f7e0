// ZoneCapacity: changes a zone's TensorCore capacity while tpuemud runs — shrink it to cause a
// stockout (creates fail their Operation with code 8, queued resources wait in
// WAITING_FOR_RESOURCES), grow it back and the queued resources waiting there provision, oldest
// first. Overrides are stored (they survive a restart) and applied to TensorCoreQuota; a zone
// without one has --zone-capacity-tensorcores.
//
// Threads: every call is thread-safe (the store and the quota are); the store, quota and catalog
// are borrowed and must outlive this object.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "db/fault_settings_repository.h"
#include "db/store.h"
#include "service/catalog/catalog.h"
#include "service/common/event_sink.h"
#include "service/faults/fault_event.h"
#include "service/nodes/quota.h"

namespace tpuemu::service {

class ZoneCapacity {
 public:
  // `on_changed(zone)` runs after a change is stored (the daemon reconciles that zone's queued
  // resources there); `listener` hears a CAPACITY event.
  ZoneCapacity(db::Store& store, TensorCoreQuota& quota, const Catalog& catalog,
               std::function<void(const std::string& zone)> on_changed, FaultListener listener);

  // Where a change writes its CAPACITY event, in the change's transaction (borrowed; null = none).
  void SetEventSink(EventSink* sink) { event_sink_ = sink; }
  // Applies the stored overrides (startup).
  Status Load();
  // {"zone", "capacityTensorcores", "usedTensorcores", "overridden"}. NOT_FOUND for an unknown
  // zone; INVALID_ARGUMENT for a negative capacity.
  Result<nlohmann::json> Set(const std::string& zone, int64_t tensorcores);
  // Back to the default capacity.
  Result<nlohmann::json> Clear(const std::string& zone);
  Result<nlohmann::json> Get(const std::string& zone) const;
  // {"zones": [...]} for every zone of the catalog.
  nlohmann::json List() const;

 private:
  nlohmann::json Render(const std::string& zone) const;
  Status CheckZone(const std::string& zone) const;
  // Stores the change (`write`) with its CAPACITY event in one transaction, after `apply` moved
  // the in-memory capacity (reloaded from the store if the transaction fails); then the hooks.
  Status Change(const std::string& zone, const std::function<Status(db::Txn&)>& write,
                const std::function<void()>& apply);

  db::Store& store_;
  db::FaultSettingsRepository settings_;
  TensorCoreQuota& quota_;
  const Catalog& catalog_;
  std::function<void(const std::string&)> on_changed_;
  FaultListener listener_;
  EventSink* event_sink_ = nullptr;
};

}  // namespace tpuemu::service
