#include "db/statement_helpers.h"

#include <string>

namespace tpuemu::db {

Result<int64_t> InsertReturningSeq(Statement& insert, std::string_view kind, std::string_view name,
                                   std::string_view no_row) {
  Result<bool> inserted = insert.Step();
  if (!inserted.ok()) {
    if (!kind.empty() && inserted.status().code() == StatusCode::kAlreadyExists) {
      return Status::AlreadyExists(std::string(kind) + " '" + std::string(name) +
                                   "' already exists");
    }
    return inserted.status();
  }
  if (!*inserted) return Status::Internal(std::string(no_row));
  const int64_t seq = insert.ColumnInt64(0);
  // Finish the statement so the insert is complete before the transaction commits.
  TPUEMU_RETURN_IF_ERROR(insert.Run());
  return seq;
}

}  // namespace tpuemu::db
