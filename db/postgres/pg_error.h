// PgError: the one translation from a failed libpq call to tpuemu's Status (base/status.h), as
// db/sqlite_error.h is for SQLite.
#pragma once

#include <string_view>

#include "base/status.h"

struct pg_conn;
struct pg_result;

namespace tpuemu::db::postgres {

// SQLSTATE 23505 (unique_violation) -> ALREADY_EXISTS; 40001/40P01 (serialization failure,
// deadlock), 55P03 (lock not available), 57014 (statement timeout) and class 08 (connection) ->
// UNAVAILABLE (retryable: "database busy: …" / "database unreachable: …"); a lost connection ->
// UNAVAILABLE; anything else -> INTERNAL ("database error: …"). `result` may be null (the
// connection's last error is used); `context` names the operation.
Status PgError(pg_conn* conn, const pg_result* result, std::string_view context);

}  // namespace tpuemu::db::postgres
