#include "service/projects/project_metadata.h"

#include <chrono>
#include <cstdio>
#include <set>

#include "service/common/clock.h"

namespace tpuemu::service {
namespace {

using nlohmann::json;

constexpr size_t kMaxValueBytes = 256 * 1024;  // Compute Engine: one value
constexpr size_t kMaxTotalBytes = 512 * 1024;  // Compute Engine: all of a resource's metadata

bool ValidKey(const std::string& key) {
  if (key.empty() || key.size() > 128) return false;
  for (char c : key) {
    bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_';
    if (!ok) return false;
  }
  return true;
}

std::string Fingerprint(const json& items) {
  // Compute's fingerprints are base64 of a hash; any stable opaque string does.
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : items.dump()) {
    h ^= c;
    h *= 1099511628211ull;
  }
  static const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (int i = 0; i < 11; ++i) out += kAlphabet[(h >> (i * 6)) & 63];
  return out + "=";
}

}  // namespace

Result<ProjectMetadata::Cached> ProjectMetadata::Load(const std::string& project) const {
  {
    std::lock_guard lock(mu_);
    if (auto it = cache_.find(project); it != cache_.end()) return it->second;
  }
  Result<std::optional<db::ProjectMetadataRow>> row = rows_.Get(project);
  if (!row.ok()) return row.status();
  Cached cached{Fingerprint(json::array()), json::array()};
  if (*row) {
    cached.fingerprint = (*row)->fingerprint;
    cached.items = json::parse((*row)->items_json, nullptr, false);
    if (!cached.items.is_array()) cached.items = json::array();
  }
  std::lock_guard lock(mu_);
  cache_[project] = cached;
  return cached;
}

Result<ProjectInfo> ProjectMetadata::Info(const std::string& project) const {
  Result<Cached> cached = Load(project);
  if (!cached.ok()) return cached.status();
  return ProjectInfo{project, ProjectNumber(project), cached->items};
}

Result<json> ProjectMetadata::Project(const std::string& project) const {
  Result<Cached> cached = Load(project);
  if (!cached.ok()) return cached.status();
  const std::string number = ProjectNumber(project);
  const std::string self = "https://compute.googleapis.com/compute/v1/projects/" + project;
  json metadata = {{"kind", "compute#metadata"}, {"fingerprint", cached->fingerprint}};
  if (!cached->items.empty()) metadata["items"] = cached->items;
  return json{{"kind", "compute#project"},
              {"id", number},
              {"name", project},
              {"creationTimestamp", "2024-01-01T00:00:00.000-07:00"},
              {"commonInstanceMetadata", metadata},
              {"defaultServiceAccount", number + "-compute@developer.gserviceaccount.com"},
              {"defaultNetworkTier", "PREMIUM"},
              {"xpnProjectStatus", "UNSPECIFIED_XPN_PROJECT_STATUS"},
              {"selfLink", self}};
}

Result<json> ProjectMetadata::SetCommonInstanceMetadata(const std::string& project,
                                                        const json& metadata) {
  if (!metadata.is_object()) {
    return Status::InvalidArgument(
        "Invalid value for field 'resource': the body must be a Metadata "
        "object with 'items'");
  }
  json items = json::array();
  std::set<std::string> keys;
  size_t total = 0;
  if (metadata.contains("items")) {
    const json& given = metadata["items"];
    if (!given.is_array()) {
      return Status::InvalidArgument("Invalid value for field 'resource.items': must be a list");
    }
    for (size_t i = 0; i < given.size(); ++i) {
      const json& item = given[i];
      const std::string field = "resource.items[" + std::to_string(i) + "]";
      if (!item.is_object() || !item.contains("key") || !item["key"].is_string()) {
        return Status::InvalidArgument("Invalid value for field '" + field +
                                       ".key': a string key is required");
      }
      std::string key = item["key"].get<std::string>();
      if (!ValidKey(key)) {
        return Status::InvalidArgument("Invalid value for field '" + field + ".key': '" + key +
                                       "'. Must be 1-128 letters, digits, '-' or '_'");
      }
      if (!keys.insert(key).second) {
        return Status::InvalidArgument("Invalid value for field '" + field +
                                       ".key': duplicate key '" + key + "'");
      }
      std::string value;
      if (item.contains("value") && !item["value"].is_null()) {
        if (!item["value"].is_string()) {
          return Status::InvalidArgument("Invalid value for field '" + field +
                                         ".value': must be a string");
        }
        value = item["value"].get<std::string>();
      }
      if (value.size() > kMaxValueBytes) {
        return Status::InvalidArgument(
            "Invalid value for field '" + field + ".value': " + std::to_string(value.size()) +
            " bytes, over the limit of " + std::to_string(kMaxValueBytes));
      }
      total += key.size() + value.size();
      items.push_back({{"key", key}, {"value", value}});
    }
  }
  if (total > kMaxTotalBytes) {
    return Status::InvalidArgument(
        "Invalid value for field 'resource.items': " + std::to_string(total) +
        " bytes of metadata, over the limit of " + std::to_string(kMaxTotalBytes));
  }
  std::optional<std::string> expected;
  if (metadata.contains("fingerprint") && metadata["fingerprint"].is_string()) {
    expected = metadata["fingerprint"].get<std::string>();
  }
  const std::string fingerprint = Fingerprint(items);
  Status s = store_.Transaction([&](db::Txn& txn) -> Status {
    Result<std::optional<db::ProjectMetadataRow>> row = rows_.Get(txn, project);
    if (!row.ok()) return row.status();
    const std::string current = *row ? (*row)->fingerprint : Fingerprint(json::array());
    if (expected && !expected->empty() && *expected != current) {
      return Status::FailedPrecondition(
          "Supplied fingerprint does not match current metadata fingerprint.");
    }
    return rows_.Put(txn, {project, fingerprint, items.dump()});
  });
  {
    std::lock_guard lock(mu_);
    cache_.erase(project);
  }
  if (!s.ok()) return s;
  NotifyListeners(project);
  char name[64];
  std::snprintf(name, sizeof name, "operation-%lld-%08x", static_cast<long long>(NowUnixMs()),
                static_cast<unsigned>(std::hash<std::string>{}(fingerprint)));
  return DoneOperation(project, name, "setCommonInstanceMetadata");
}

json ProjectMetadata::DoneOperation(const std::string& project, const std::string& name,
                                    const std::string& type) {
  const std::string base = "https://compute.googleapis.com/compute/v1/projects/" + project;
  const std::string now = NowRfc3339();
  return {{"kind", "compute#operation"},
          {"id", ProjectNumber(name)},
          {"name", name},
          {"operationType", type},
          {"targetLink", base},
          {"targetId", ProjectNumber(project)},
          {"status", "DONE"},
          {"user", "tpuemu"},
          {"progress", 100},
          {"insertTime", now},
          {"startTime", now},
          {"endTime", now},
          {"selfLink", base + "/global/operations/" + name}};
}

void ProjectMetadata::Forget() {
  {
    std::lock_guard lock(mu_);
    cache_.clear();
  }
  NotifyListeners("");
}

int ProjectMetadata::AddListener(Listener listener) {
  std::lock_guard lock(listeners_mu_);
  const int id = next_listener_++;
  listeners_[id] = std::move(listener);
  return id;
}

void ProjectMetadata::RemoveListener(int id) {
  std::lock_guard lock(listeners_mu_);
  listeners_.erase(id);
}

void ProjectMetadata::NotifyListeners(const std::string& project) {
  std::lock_guard lock(listeners_mu_);
  for (const auto& [id, listener] : listeners_) listener(project);
}

}  // namespace tpuemu::service
