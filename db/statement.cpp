#include "db/statement.h"

namespace tpuemu::db {

Status Statement::Run() {
  for (;;) {
    Result<bool> row = Step();
    if (!row.ok()) return row.status();
    if (!*row) return Status::Ok();
  }
}

std::optional<int64_t> Statement::ColumnOptionalInt64(int column) const {
  if (IsNull(column)) return std::nullopt;
  return ColumnInt64(column);
}

std::optional<std::string> Statement::ColumnOptionalText(int column) const {
  if (IsNull(column)) return std::nullopt;
  return ColumnText(column);
}

}  // namespace tpuemu::db
