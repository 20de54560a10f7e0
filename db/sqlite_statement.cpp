#include "db/sqlite_statement.h"

#include "db/sqlite_error.h"

#include <sqlite3.h>

#include <cstdio>
#include <cstdlib>

#include <utility>

namespace tpuemu::db {

Result<std::unique_ptr<SqliteStatement>> SqliteStatement::Prepare(sqlite3* db, std::string_view sql,
                                                                  bool persistent) {
  sqlite3_stmt* stmt = nullptr;
  const char* tail = nullptr;
  int rc = sqlite3_prepare_v3(db, sql.data(), static_cast<int>(sql.size()),
                              persistent ? SQLITE_PREPARE_PERSISTENT : 0, &stmt, &tail);
  if (rc != SQLITE_OK) {
    return SqliteError(db, rc, "prepare '" + std::string(sql) + "'");
  }
  if (stmt == nullptr) return Status::Internal("prepare: empty SQL '" + std::string(sql) + "'");
  std::unique_ptr<SqliteStatement> out(new SqliteStatement(db, stmt));
  // A second statement in the text would be silently ignored; refuse it instead.
  for (const char* p = tail; p != nullptr && p < sql.data() + sql.size(); ++p) {
    if (*p != ' ' && *p != '\n' && *p != '\t' && *p != '\r' && *p != ';') {
      return Status::Internal("prepare: more than one statement in '" + std::string(sql) + "'");
    }
  }
  return out;
}

SqliteStatement::~SqliteStatement() { sqlite3_finalize(stmt_); }

Statement& SqliteStatement::Bind(int index, int64_t value) {
  int rc = sqlite3_bind_int64(stmt_, index, value);
  if (rc != SQLITE_OK && last_error_ == 0) last_error_ = rc;
  return *this;
}

Statement& SqliteStatement::Bind(int index, std::string_view value) {
  int rc =
      sqlite3_bind_text64(stmt_, index, value.data(), value.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  if (rc != SQLITE_OK && last_error_ == 0) last_error_ = rc;
  return *this;
}

Statement& SqliteStatement::BindNull(int index) {
  int rc = sqlite3_bind_null(stmt_, index);
  if (rc != SQLITE_OK && last_error_ == 0) last_error_ = rc;
  return *this;
}

Result<bool> SqliteStatement::Step() {
  if (last_error_ != 0) {
    return SqliteError(db_, last_error_, std::string("bind for '") + Sql() + "'");
  }
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return SqliteError(db_, rc, std::string("step '") + Sql() + "'");
}

bool SqliteStatement::IsNull(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

int64_t SqliteStatement::ColumnInt64(int column) const {
  return sqlite3_column_int64(stmt_, column);
}

Statement& SqliteStatement::BindReal(int index, double value) {
  char text[40];
  std::snprintf(text, sizeof text, "%.17g", value);
  return Bind(index, std::string_view(text));
}

double SqliteStatement::ColumnReal(int column) const {
  return std::strtod(ColumnText(column).c_str(), nullptr);
}

std::string SqliteStatement::ColumnText(int column) const {
  const unsigned char* text = sqlite3_column_text(stmt_, column);
  if (text == nullptr) return {};
  // Length after the text conversion above, so embedded NULs survive.
  int bytes = sqlite3_column_bytes(stmt_, column);
  return std::string(reinterpret_cast<const char*>(text), static_cast<size_t>(bytes));
}

void SqliteStatement::Reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
  last_error_ = 0;
}

bool SqliteStatement::ReadOnly() const { return sqlite3_stmt_readonly(stmt_) != 0; }

const char* SqliteStatement::Sql() const { return sqlite3_sql(stmt_); }

}  // namespace tpuemu::db
