// SqliteError: the one translation from a SQLite result code to tpuemu's Status (base/status.h).
#pragma once

#include <string_view>

#include "base/status.h"

struct sqlite3;

namespace tpuemu::db {

// Extended result codes are enabled on every connection. CONSTRAINT_PRIMARYKEY/UNIQUE ->
// ALREADY_EXISTS; BUSY/LOCKED -> UNAVAILABLE (retryable: "database busy: …"); CORRUPT/NOTADB ->
// DATA_LOSS (not a usable tpuemu database); anything else -> INTERNAL ("database error: …").
// `context` names the operation; the message also carries sqlite3_errmsg(db) when db is not null.
// Returns OK for SQLITE_OK/ROW/DONE.
Status SqliteError(sqlite3* db, int rc, std::string_view context);

}  // namespace tpuemu::db
