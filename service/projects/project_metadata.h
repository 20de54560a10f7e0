// ProjectMetadata: Compute Engine's view of a project as gcloud's `tpu-vm ssh` needs it — the
// project resource (`GET /compute/v1/projects/P`) with its commonInstanceMetadata (project-wide
// `ssh-keys`, `enable-oslogin`, any key), and setCommonInstanceMetadata with Compute's
// fingerprint check. Every TPU VM worker's metadata server serves the same items under
// project/attributes/, and project-wide ssh-keys become users on every worker.
//
// Persisted in the store (db/project_metadata_repository.h); reads are cached in memory and the
// cache is dropped on every write and on Forget(). Listeners hear of every change this process
// makes or is told of (the workers apply project-wide ssh-keys on change). Thread-safe: the cache
// is guarded by mu_, the listeners by listeners_mu_.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <string>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "db/project_metadata_repository.h"
#include "db/store.h"
#include "service/workers/guest_metadata.h"

namespace tpuemu::service {

class ProjectMetadata {
 public:
  explicit ProjectMetadata(db::Store& store) : store_(store), rows_(store) {}

  // The project's id, number and items (an empty list when never set).
  Result<ProjectInfo> Info(const std::string& project) const;
  // The Compute Engine `Project` resource (kind compute#project) for `project`.
  Result<nlohmann::json> Project(const std::string& project) const;
  // Replaces the project's items with `metadata` ({"fingerprint", "items": [{key, value}]}).
  // INVALID_ARGUMENT for a bad key, a duplicate key or values over Compute's limits;
  // FAILED_PRECONDITION (HTTP 412 in api/) when `fingerprint` is given and is not the current
  // one. Returns the Compute `Operation` (already DONE).
  Result<nlohmann::json> SetCommonInstanceMetadata(const std::string& project,
                                                   const nlohmann::json& metadata);
  // A done Compute operation named `name` of `project` (every operation here completes at once).
  static nlohmann::json DoneOperation(const std::string& project, const std::string& name,
                                      const std::string& type);
  // Drops the cache (POST /_emulator/reset, or another replica wrote); listeners hear "" (every
  // project may have changed).
  void Forget();

  // `listener(project)` runs after each committed SetCommonInstanceMetadata of `project`, on the
  // writer's thread, and after Forget() with "". It must be quick (queue work, never block) and
  // must not call back into this object's writers. Returns an id for RemoveListener, which waits
  // for a call in progress to end.
  using Listener = std::function<void(const std::string& project)>;
  int AddListener(Listener listener);
  void RemoveListener(int id);

 private:
  struct Cached {
    std::string fingerprint;
    nlohmann::json items;
  };
  Result<Cached> Load(const std::string& project) const;
  void NotifyListeners(const std::string& project);

  db::Store& store_;
  db::ProjectMetadataRepository rows_;
  mutable std::mutex mu_;
  mutable std::map<std::string, Cached> cache_;  // guarded by mu_
  std::mutex listeners_mu_;                      // held while listeners run
  std::map<int, Listener> listeners_;            // guarded by listeners_mu_
  int next_listener_ = 1;                        // guarded by listeners_mu_
};

}  // namespace tpuemu::service
