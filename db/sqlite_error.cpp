#include "db/sqlite_error.h"

#include <sqlite3.h>

#include <string>

namespace tpuemu::db {

Status SqliteError(sqlite3* db, int rc, std::string_view context) {
  if (rc == SQLITE_OK || rc == SQLITE_ROW || rc == SQLITE_DONE) return Status::Ok();
  std::string message(context);
  message += ": ";
  // sqlite3_errmsg describes the most recent failure on this connection, which is this one as long
  // as the caller holds the connection's mutex (every caller in db/ does).
  message += db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  switch (rc) {
    case SQLITE_CONSTRAINT_PRIMARYKEY:
    case SQLITE_CONSTRAINT_UNIQUE:
      return Status::AlreadyExists(std::move(message));
    default:
      break;
  }
  switch (rc & 0xff) {  // primary code of an extended one
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return Status::Unavailable("database busy: " + message);
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return Status::DataLoss(std::move(message));
    default:
      return Status::Internal("database error: " + message);
  }
}

}  // namespace tpuemu::db
