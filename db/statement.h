// Statement: an RAII owner of one prepared sqlite3_stmt with typed Bind/Column helpers.
//
// Store keeps one Statement per distinct SQL text and hands it out through Txn::Prepare, which
// resets it and clears its bindings first, so callers always start from a fresh statement. A
// Statement is not thread-safe on its own: it belongs to its Store's connection and is only used
// while that Store's mutex is held (i.e. inside Store::Transaction / Store::Read).
//
// Parameter indexes are 1-based (SQLite's ?1, ?2 ...); column indexes are 0-based.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "db/sqlite_error.h"

struct sqlite3_stmt;

namespace tpuemu::db {

class Statement {
 public:
  // Prepares `sql` (one statement) on `db`; `persistent` hints SQLite that it will be reused.
  static Result<Statement> Prepare(sqlite3* db, std::string_view sql, bool persistent);

  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();  // finalizes

  // Binding never fails for a valid index and a live statement; a failure is reported by Step().
  Statement& Bind(int index, int64_t value);
  Statement& Bind(int index, int value) { return Bind(index, static_cast<int64_t>(value)); }
  Statement& Bind(int index, bool value) { return Bind(index, static_cast<int64_t>(value)); }
  Statement& Bind(int index, std::string_view value);  // copied (SQLITE_TRANSIENT)
  Statement& Bind(int index, const char* value) { return Bind(index, std::string_view(value)); }
  Statement& Bind(int index, const std::string& value) {
    return Bind(index, std::string_view(value));
  }
  Statement& BindNull(int index);
  // REAL columns: bound as decimal text with 17 significant digits (round-trips a double exactly),
  // which REAL affinity stores as a number.
  Statement& BindReal(int index, double value);
  template <typename T>
  Statement& Bind(int index, const std::optional<T>& value) {
    return value.has_value() ? Bind(index, *value) : BindNull(index);
  }

  // Advances: true when a row is available, false when the statement is done, or the error
  // (translated by SqliteError, e.g. kAlreadyExists for a duplicate primary key).
  Result<bool> Step();
  // Steps a statement that returns no rows (INSERT/UPDATE/DELETE/DDL) to completion.
  Status Run();

  // Column readers for the current row (valid only after Step() returned true).
  bool IsNull(int column) const;
  int64_t ColumnInt64(int column) const;
  std::string ColumnText(int column) const;
  double ColumnReal(int column) const;  // 0 for NULL
  std::optional<int64_t> ColumnOptionalInt64(int column) const;
  std::optional<std::string> ColumnOptionalText(int column) const;

  // Ends the current execution (releasing any read snapshot it holds) and clears bindings.
  void Reset();
  bool ReadOnly() const;
  const char* Sql() const;

 private:
  Statement(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  void Finalize();

  sqlite3* db_ = nullptr;         // not owned; the Store's connection
  sqlite3_stmt* stmt_ = nullptr;  // owned
  int last_error_ = 0;            // first bind failure since the last Reset, reported by Step()
};

}  // namespace tpuemu::db
