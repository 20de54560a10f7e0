// ProjectMetadataRepository: the `project_metadata` table (schema v9) — Compute Engine's
// commonInstanceMetadata of each project, as one JSON list of {key, value} with its fingerprint.
// Holds only the Store reference (not owned). Errors: whatever the Store reports.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "db/store.h"

namespace tpuemu::db {

struct ProjectMetadataRow {
  std::string project;
  std::string fingerprint;
  std::string items_json;  // opaque to db/
};

class ProjectMetadataRepository {
 public:
  explicit ProjectMetadataRepository(Store& store) : store_(store) {}

  // The project's row inside `txn`; nullopt when none was ever set.
  Result<std::optional<ProjectMetadataRow>> Get(Txn& txn, std::string_view project) const;
  // The same in a read of its own.
  Result<std::optional<ProjectMetadataRow>> Get(std::string_view project) const;
  // Inserts or replaces the project's row.
  Status Put(Txn& txn, const ProjectMetadataRow& row) const;

 private:
  Store& store_;
};

}  // namespace tpuemu::db
