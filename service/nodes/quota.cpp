#include "service/nodes/quota.h"

namespace tpuemu::service {

TensorCoreQuota::TensorCoreQuota(db::Store& store, const Catalog& catalog, QuotaLimits limits)
    : store_(store), catalog_(catalog), limits_(limits), nodes_(store) {}

Status TensorCoreQuota::Reseed() {
  std::map<std::string, int64_t> used;
  Status s = store_.Read([&](db::Txn& txn) -> Status {
    for (const Zone& zone : catalog_.zones()) {
      Result<int64_t> sum = nodes_.SumTensorCoresInZone(txn, zone.id);
      if (!sum.ok()) return sum.status();
      if (*sum > 0) used[zone.id] = *sum;
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
  project_tensorcores_.clear();
}

Result<int64_t> TensorCoreQuota::ProjectUsed(db::Txn& txn, const std::string& project) {
  {
    std::lock_guard lock(mu_);
    auto it = project_tensorcores_.find(project);
    if (it != project_tensorcores_.end()) return it->second;
  }
  Result<int64_t> sum = nodes_.SumTensorCores(txn, project, db::NodeRepository::kAllZones);
  if (!sum.ok()) return sum.status();
  std::lock_guard lock(mu_);
  project_tensorcores_[project] = *sum;
  return *sum;
}

Status TensorCoreQuota::CheckProject(db::Txn& txn, const std::string& project,
                                     const engine::AcceleratorType& type) {
  if (limits_.project_quota_tensorcores <= 0) return Status::Ok();
  Result<int64_t> used = ProjectUsed(txn, project);
  if (!used.ok()) return used.status();
  if (*used + type.tensorcores <= limits_.project_quota_tensorcores) return Status::Ok();
  return Status::ResourceExhausted("Quota 'TPU_TENSORCORES_PER_PROJECT' exceeded. Limit: " +
                                   std::to_string(limits_.project_quota_tensorcores) +
                                   " in project " + project + " (in use: " + std::to_string(*used) +
                                   ", requested: " + std::to_string(type.tensorcores) + " for " +
                                   type.name + ").");
}

Status TensorCoreQuota::CheckZone(const std::string& zone, const engine::AcceleratorType& type,
                                  const std::string& operation_name) const {
  if (ZoneUsed(zone) + type.tensorcores <= limits_.zone_capacity_tensorcores) return Status::Ok();
  const std::string eid = operation_name.size() >= 8
                              ? operation_name.substr(operation_name.size() - 8)
                              : operation_name;
  return Status::ResourceExhausted(
      "There is no more capacity in the zone \"" + zone +
      "\"; you can try in another zone where Cloud TPU Nodes are offered (see "
      "https://cloud.google.com/tpu/docs/regions) [EID: 0x" +
      eid + "]");
}

void TensorCoreQuota::Add(const std::string& project, const std::string& zone,
                          int64_t tensorcores) {
  std::lock_guard lock(mu_);
  zone_tensorcores_[zone] += tensorcores;
  auto it = project_tensorcores_.find(project);
  if (it != project_tensorcores_.end()) it->second += tensorcores;  // absent: counted on first use
}

int64_t TensorCoreQuota::ZoneUsed(const std::string& zone) const {
  std::lock_guard lock(mu_);
  auto it = zone_tensorcores_.find(zone);
  return it == zone_tensorcores_.end() ? 0 : it->second;
}

}  // namespace tpuemu::service
