// Schema migrations: an ordered list of SQL scripts, tracked with PRAGMA user_version.
//
// Migration N moves a database from user_version N-1 to N. Each one runs in its own
// BEGIN IMMEDIATE transaction together with the user_version bump, so a failed or interrupted
// migration leaves the database at the previous version. To change the schema, append a
// migration to the list in migrations.cpp; never edit one that has shipped.
#pragma once

#include <span>
#include <string_view>

#include "base/status.h"

struct sqlite3;

namespace tpuemu::db {

struct Migration {
  int version;           // 1, 2, 3, ... consecutive
  std::string_view sql;  // one or more statements
  // Run first, outside any transaction (VACUUM cannot run in one); must be safe to run again, as
  // it is when the process stops before the migration commits.
  std::string_view before = {};
};

// tpuemud's migrations, oldest first.
std::span<const Migration> Migrations();
// The schema version this build writes (the last migration's version).
int LatestSchemaVersion();

// Applies to `db` every migration in `migrations` newer than its user_version. Errors: kCorruption
// "database schema version N is newer than this tpuemud (M)" when the file is ahead of the list,
// or the failing migration's status (earlier migrations stay applied).
Status Migrate(sqlite3* db, std::span<const Migration> migrations);
inline Status Migrate(sqlite3* db) { return Migrate(db, Migrations()); }

}  // namespace tpuemu::db
