#include "service/nodes/quota.h"

namespace tpuemu::service {

Status ZoneStockout(const std::string& zone, const std::string& operation_name,
                    const std::string& detail) {
  const std::string eid = operation_name.size() >= 8
                              ? operation_name.substr(operation_name.size() - 8)
                              : operation_name;
  return Status::ResourceExhausted(
      "There is no more capacity in the zone \"" + zone +
      "\"; you can try in another zone where Cloud TPU Nodes are offered (see "
      "https://cloud.google.com/tpu/docs/regions) [EID: 0x" +
      eid + "]" + (detail.empty() ? "" : " " + detail));
}

TensorCoreQuota::TensorCoreQuota(db::Store& store, const Catalog& catalog, QuotaLimits limits)
    : store_(store), catalog_(catalog), limits_(limits), nodes_(store), queued_resources_(store) {}

Result<int64_t> TensorCoreQuota::CountZone(db::Txn& txn, const std::string& zone) const {
  Result<int64_t> nodes = nodes_.SumTensorCoresInZone(txn, zone);
  if (!nodes.ok()) return nodes.status();
  Result<int64_t> queued = queued_resources_.SumHeldInZone(txn, zone);
  if (!queued.ok()) return queued.status();
  return *nodes + *queued;
}

Status TensorCoreQuota::Sync(db::Txn& txn, const std::string& zone) {
  if (!shared_) return Status::Ok();
  Result<int64_t> used = CountZone(txn, zone);
  if (!used.ok()) return used.status();
  std::lock_guard lock(mu_);
  zone_tensorcores_[zone] = *used;
  return Status::Ok();
}

Status TensorCoreQuota::Reseed() {
  std::map<std::string, int64_t> used;
  Status s = store_.Read([&](db::Txn& txn) -> Status {
    for (const Zone& zone : catalog_.zones()) {
      Result<int64_t> count = CountZone(txn, zone.id);
      if (!count.ok()) return count.status();
      if (*count > 0) used[zone.id] = *count;
    }
    return Status::Ok();
  });
  if (!s.ok()) return s;
  std::lock_guard lock(mu_);
  zone_tensorcores_ = std::move(used);
  project_tensorcores_.clear();  // recounted lazily by ProjectUsed
  return Status::Ok();
}

void TensorCoreQuota::Clear() {
  std::lock_guard lock(mu_);
  zone_tensorcores_.clear();
  zone_capacity_.clear();
  project_tensorcores_.clear();
}

Result<int64_t> TensorCoreQuota::ProjectUsed(db::Txn& txn, const std::string& project) {
  if (!shared_) {
    std::lock_guard lock(mu_);
    auto it = project_tensorcores_.find(project);
    if (it != project_tensorcores_.end()) return it->second;
  }
  Result<int64_t> nodes = nodes_.SumStandaloneTensorCores(txn, project);
  if (!nodes.ok()) return nodes.status();
  Result<int64_t> queued = queued_resources_.SumTensorCores(txn, project);
  if (!queued.ok()) return queued.status();
  std::lock_guard lock(mu_);
  if (!shared_) project_tensorcores_[project] = *nodes + *queued;
  return *nodes + *queued;
}

Status TensorCoreQuota::CheckProject(db::Txn& txn, const std::string& project, int64_t tensorcores,
                                     const std::string& what) {
  if (limits_.project_quota_tensorcores <= 0) return Status::Ok();
  Result<int64_t> used = ProjectUsed(txn, project);
  if (!used.ok()) return used.status();
  if (*used + tensorcores <= limits_.project_quota_tensorcores) return Status::Ok();
  return Status::ResourceExhausted("Quota 'TPU_TENSORCORES_PER_PROJECT' exceeded. Limit: " +
                                   std::to_string(limits_.project_quota_tensorcores) +
                                   " in project " + project + " (in use: " + std::to_string(*used) +
                                   ", requested: " + std::to_string(tensorcores) + " for " + what +
                                   ").");
}

Status TensorCoreQuota::CheckZone(const std::string& zone, int64_t tensorcores,
                                  const std::string& operation_name) const {
  if (ZoneCounted(zone) + tensorcores <= ZoneCapacity(zone)) return Status::Ok();
  return ZoneStockout(zone, operation_name);
}

void TensorCoreQuota::AddProject(const std::string& project, int64_t tensorcores) {
  std::lock_guard lock(mu_);
  auto it = project_tensorcores_.find(project);
  if (it != project_tensorcores_.end()) it->second += tensorcores;  // absent: counted on first use
}

void TensorCoreQuota::AddZone(const std::string& zone, int64_t tensorcores) {
  std::lock_guard lock(mu_);
  zone_tensorcores_[zone] += tensorcores;
}

int64_t TensorCoreQuota::ZoneUsed(const std::string& zone) const {
  if (shared_) {
    Result<int64_t> used =
        store_.ReadResult<int64_t>([&](db::Txn& txn) { return CountZone(txn, zone); });
    if (used.ok()) return *used;  // else the last count this replica made
  }
  return ZoneCounted(zone);
}

int64_t TensorCoreQuota::ZoneCounted(const std::string& zone) const {
  std::lock_guard lock(mu_);
  auto it = zone_tensorcores_.find(zone);
  return it == zone_tensorcores_.end() ? 0 : it->second;
}

int64_t TensorCoreQuota::ZoneCapacity(const std::string& zone) const {
  std::lock_guard lock(mu_);
  auto it = zone_capacity_.find(zone);
  return it == zone_capacity_.end() ? limits_.zone_capacity_tensorcores : it->second;
}

void TensorCoreQuota::SetZoneCapacity(const std::string& zone, int64_t tensorcores) {
  std::lock_guard lock(mu_);
  zone_capacity_[zone] = std::max<int64_t>(0, tensorcores);
}

void TensorCoreQuota::ClearZoneCapacity(const std::string& zone) {
  std::lock_guard lock(mu_);
  zone_capacity_.erase(zone);
}

}  // namespace tpuemu::service
