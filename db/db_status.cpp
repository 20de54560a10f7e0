#include "db/db_status.h"

#include <sqlite3.h>

namespace tpuemu::db {

std::string_view DbCodeName(DbCode code) {
  switch (code) {
    case DbCode::kOk:
      return "OK";
    case DbCode::kNotFound:
      return "NOT_FOUND";
    case DbCode::kAlreadyExists:
      return "ALREADY_EXISTS";
    case DbCode::kBusy:
      return "BUSY";
    case DbCode::kCorruption:
      return "CORRUPTION";
    case DbCode::kIoError:
      return "IO_ERROR";
    case DbCode::kInvalid:
      return "INVALID";
  }
  return "UNKNOWN";
}

std::string DbStatus::ToString() const {
  if (ok()) return "OK";
  std::string out(DbCodeName(code_));
  out += ": ";
  out += message_;
  return out;
}

DbStatus SqliteError(sqlite3* db, int rc, std::string_view context) {
  if (rc == SQLITE_OK || rc == SQLITE_ROW || rc == SQLITE_DONE) return DbStatus::Ok();
  std::string message(context);
  message += ": ";
  // sqlite3_errmsg describes the most recent failure on this connection, which is this one as long
  // as the caller holds the connection's mutex (every caller in db/ does).
  message += db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  switch (rc) {
    case SQLITE_CONSTRAINT_PRIMARYKEY:
    case SQLITE_CONSTRAINT_UNIQUE:
      return DbStatus::AlreadyExists(std::move(message));
    default:
      break;
  }
  switch (rc & 0xff) {  // primary code of an extended one
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return DbStatus::Busy(std::move(message));
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return DbStatus::Corruption(std::move(message));
    default:
      return DbStatus::IoError(std::move(message));
  }
}

}  // namespace tpuemu::db
