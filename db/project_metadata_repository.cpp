#include "db/project_metadata_repository.h"

#include "db/statement_helpers.h"

namespace tpuemu::db {

Result<std::optional<ProjectMetadataRow>> ProjectMetadataRepository::Get(
    Txn& txn, std::string_view project) const {
  TPUEMU_PREPARE_OR_RETURN(
      stmt, txn.Prepare("SELECT fingerprint, items_json FROM project_metadata WHERE project = ?1"));
  stmt.Bind(1, project);
  Result<bool> row = stmt.Step();
  if (!row.ok()) return row.status();
  if (!*row) return std::optional<ProjectMetadataRow>();
  return std::optional<ProjectMetadataRow>(
      ProjectMetadataRow{std::string(project), stmt.ColumnText(0), stmt.ColumnText(1)});
}

Result<std::optional<ProjectMetadataRow>> ProjectMetadataRepository::Get(
    std::string_view project) const {
  return store_.ReadResult<std::optional<ProjectMetadataRow>>(
      [&](Txn& txn) { return Get(txn, project); });
}

Status ProjectMetadataRepository::Put(Txn& txn, const ProjectMetadataRow& row) const {
  TPUEMU_PREPARE_OR_RETURN(
      stmt,
      txn.Prepare(
          "INSERT INTO project_metadata (project, fingerprint, items_json) VALUES (?1, ?2, ?3) "
          "ON CONFLICT (project) DO UPDATE SET fingerprint = excluded.fingerprint, "
          "items_json = excluded.items_json"));
  stmt.Bind(1, row.project).Bind(2, row.fingerprint).Bind(3, row.items_json);
  return stmt.Run();
}

}  // namespace tpuemu::db
