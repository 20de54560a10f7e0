#include "db/postgres/pg_error.h"

#include <libpq-fe.h>

#include <string>

namespace tpuemu::db::postgres {

Status PgError(PGconn* conn, const PGresult* result, std::string_view context) {
  std::string message(context);
  message += ": ";
  const char* text = result != nullptr ? PQresultErrorMessage(result) : nullptr;
  if (text == nullptr || *text == '\0') text = conn != nullptr ? PQerrorMessage(conn) : "";
  std::string detail(text);
  while (!detail.empty() && (detail.back() == '\n' || detail.back() == ' ')) detail.pop_back();
  message += detail.empty() ? "unknown libpq error" : detail;

  const char* state = result != nullptr ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
  const std::string sqlstate = state != nullptr ? state : "";
  if (sqlstate == "23505") return Status::AlreadyExists(std::move(message));
  if (sqlstate == "40001" || sqlstate == "40P01" || sqlstate == "55P03" || sqlstate == "57014") {
    return Status::Unavailable("database busy: " + message);
  }
  if (sqlstate.starts_with("08") || (conn != nullptr && PQstatus(conn) == CONNECTION_BAD)) {
    return Status::Unavailable("database unreachable: " + message);
  }
  return Status::Internal("database error: " + message);
}

}  // namespace tpuemu::db::postgres
