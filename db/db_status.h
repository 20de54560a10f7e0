// DbStatus and DbResult<T>: the error currency of db/ (LevelDB-style value type).
//
// db/ must not include engine/ (and engine/ must not include db/), so the persistence layer has its
// own small status; the service translates a DbCode into a Google canonical code in one place.
// SQLite result codes become a DbStatus in exactly one function, SqliteError().
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

struct sqlite3;

namespace tpuemu::db {

enum class DbCode {
  kOk,
  kNotFound,       // the row named by the call does not exist
  kAlreadyExists,  // a PRIMARY KEY or UNIQUE constraint refused an insert
  kBusy,           // another writer held the database longer than the busy timeout
  kCorruption,     // the file is not a usable tpuemu database (damaged, or a newer schema)
  kIoError,        // any other SQLite or filesystem failure, or an exception from a txn body
  kInvalid,        // the caller misused the API (closed store, nested transaction, bad argument)
};

// "NOT_FOUND", "BUSY", ...
std::string_view DbCodeName(DbCode code);

class [[nodiscard]] DbStatus {
 public:
  DbStatus() = default;  // OK
  DbStatus(DbCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static DbStatus Ok() { return DbStatus(); }
  static DbStatus NotFound(std::string m) { return {DbCode::kNotFound, std::move(m)}; }
  static DbStatus AlreadyExists(std::string m) { return {DbCode::kAlreadyExists, std::move(m)}; }
  static DbStatus Busy(std::string m) { return {DbCode::kBusy, std::move(m)}; }
  static DbStatus Corruption(std::string m) { return {DbCode::kCorruption, std::move(m)}; }
  static DbStatus IoError(std::string m) { return {DbCode::kIoError, std::move(m)}; }
  static DbStatus Invalid(std::string m) { return {DbCode::kInvalid, std::move(m)}; }

  bool ok() const { return code_ == DbCode::kOk; }
  DbCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "NOT_FOUND: node 'projects/p/...' not found"; "OK" for success.
  std::string ToString() const;

  friend bool operator==(const DbStatus&, const DbStatus&) = default;

 private:
  DbCode code_ = DbCode::kOk;
  std::string message_;
};

// A value or the DbStatus explaining why there is none (like absl::StatusOr).
template <typename T>
class [[nodiscard]] DbResult {
 public:
  DbResult(T value) : value_(std::move(value)) {}           // NOLINT: implicit by design
  DbResult(DbStatus status) : status_(std::move(status)) {  // NOLINT
    assert(!status_.ok() && "a DbResult built from a DbStatus must carry an error");
  }

  bool ok() const { return value_.has_value(); }
  const DbStatus& status() const { return status_; }
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }

 private:
  DbStatus status_;  // OK exactly when value_ holds a value
  std::optional<T> value_;
};

// The one translation from a SQLite result code (extended codes enabled) to a DbStatus:
// CONSTRAINT_PRIMARYKEY/UNIQUE -> kAlreadyExists, BUSY/LOCKED -> kBusy, CORRUPT/NOTADB ->
// kCorruption, anything else -> kIoError. `context` names the operation; the message also carries
// sqlite3_errmsg(db) when db is not null. Returns OK for SQLITE_OK/ROW/DONE.
DbStatus SqliteError(sqlite3* db, int rc, std::string_view context);

}  // namespace tpuemu::db

// Propagates a non-OK DbStatus to the caller: TPUEMU_DB_RETURN_IF_ERROR(stmt.Step());
#define TPUEMU_DB_RETURN_IF_ERROR(expr)                    \
  do {                                                     \
    ::tpuemu::db::DbStatus tpuemu_db_status_ = (expr);     \
    if (!tpuemu_db_status_.ok()) return tpuemu_db_status_; \
  } while (0)
