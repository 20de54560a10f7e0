// SqliteStatement: a Statement (db/statement.h) that owns one prepared sqlite3_stmt.
#pragma once

#include <memory>
#include <string_view>

#include "base/status.h"
#include "db/statement.h"

struct sqlite3;
struct sqlite3_stmt;

namespace tpuemu::db {

class SqliteStatement final : public Statement {
 public:
  // Prepares `sql` (one statement) on `db`; `persistent` hints SQLite that it will be reused.
  static Result<std::unique_ptr<SqliteStatement>> Prepare(sqlite3* db, std::string_view sql,
                                                          bool persistent);
  ~SqliteStatement() override;  // finalizes

  Statement& Bind(int index, int64_t value) override;
  Statement& Bind(int index, std::string_view value) override;
  Statement& BindNull(int index) override;
  Statement& BindReal(int index, double value) override;
  using Statement::Bind;

  Result<bool> Step() override;

  bool IsNull(int column) const override;
  int64_t ColumnInt64(int column) const override;
  std::string ColumnText(int column) const override;
  double ColumnReal(int column) const override;

  void Reset() override;
  bool ReadOnly() const override;
  const char* Sql() const override;

 private:
  SqliteStatement(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}

  sqlite3* db_ = nullptr;         // not owned; the Store's connection
  sqlite3_stmt* stmt_ = nullptr;  // owned
  int last_error_ = 0;            // first bind failure since the last Reset, reported by Step()
};

}  // namespace tpuemu::db
