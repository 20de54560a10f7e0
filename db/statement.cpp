#include "db/statement.h"

#include <sqlite3.h>

#include <cstdio>
#include <cstdlib>

#include <utility>

namespace tpuemu::db {

Result<Statement> Statement::Prepare(sqlite3* db, std::string_view sql, bool persistent) {
  sqlite3_stmt* stmt = nullptr;
  const char* tail = nullptr;
  int rc = sqlite3_prepare_v3(db, sql.data(), static_cast<int>(sql.size()),
                              persistent ? SQLITE_PREPARE_PERSISTENT : 0, &stmt, &tail);
  if (rc != SQLITE_OK) {
    return SqliteError(db, rc, "prepare '" + std::string(sql) + "'");
  }
  if (stmt == nullptr) return Status::Internal("prepare: empty SQL '" + std::string(sql) + "'");
  Statement out(db, stmt);
  // A second statement in the text would be silently ignored; refuse it instead.
  for (const char* p = tail; p != nullptr && p < sql.data() + sql.size(); ++p) {
    if (*p != ' ' && *p != '\n' && *p != '\t' && *p != '\r' && *p != ';') {
      return Status::Internal("prepare: more than one statement in '" + std::string(sql) + "'");
    }
  }
  return out;
}

Statement::Statement(Statement&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)),
      stmt_(std::exchange(other.stmt_, nullptr)),
      last_error_(std::exchange(other.last_error_, 0)) {}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    Finalize();
    db_ = std::exchange(other.db_, nullptr);
    stmt_ = std::exchange(other.stmt_, nullptr);
    last_error_ = std::exchange(other.last_error_, 0);
  }
  return *this;
}

Statement::~Statement() { Finalize(); }

void Statement::Finalize() {
  if (stmt_ != nullptr) sqlite3_finalize(stmt_);
  stmt_ = nullptr;
}

Statement& Statement::Bind(int index, int64_t value) {
  int rc = sqlite3_bind_int64(stmt_, index, value);
  if (rc != SQLITE_OK && last_error_ == 0) last_error_ = rc;
  return *this;
}

Statement& Statement::Bind(int index, std::string_view value) {
  int rc =
      sqlite3_bind_text64(stmt_, index, value.data(), value.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  if (rc != SQLITE_OK && last_error_ == 0) last_error_ = rc;
  return *this;
}

Statement& Statement::BindNull(int index) {
  int rc = sqlite3_bind_null(stmt_, index);
  if (rc != SQLITE_OK && last_error_ == 0) last_error_ = rc;
  return *this;
}

Result<bool> Statement::Step() {
  if (last_error_ != 0) {
    return SqliteError(db_, last_error_, std::string("bind for '") + Sql() + "'");
  }
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return SqliteError(db_, rc, std::string("step '") + Sql() + "'");
}

Status Statement::Run() {
  for (;;) {
    Result<bool> row = Step();
    if (!row.ok()) return row.status();
    if (!*row) return Status::Ok();
  }
}

bool Statement::IsNull(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

int64_t Statement::ColumnInt64(int column) const { return sqlite3_column_int64(stmt_, column); }

Statement& Statement::BindReal(int index, double value) {
  char text[40];
  std::snprintf(text, sizeof text, "%.17g", value);
  return Bind(index, std::string_view(text));
}

double Statement::ColumnReal(int column) const {
  return std::strtod(ColumnText(column).c_str(), nullptr);
}

std::string Statement::ColumnText(int column) const {
  const unsigned char* text = sqlite3_column_text(stmt_, column);
  if (text == nullptr) return {};
  // Length after the text conversion above, so embedded NULs survive.
  int bytes = sqlite3_column_bytes(stmt_, column);
  return std::string(reinterpret_cast<const char*>(text), static_cast<size_t>(bytes));
}

std::optional<int64_t> Statement::ColumnOptionalInt64(int column) const {
  if (IsNull(column)) return std::nullopt;
  return ColumnInt64(column);
}

std::optional<std::string> Statement::ColumnOptionalText(int column) const {
  if (IsNull(column)) return std::nullopt;
  return ColumnText(column);
}

void Statement::Reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
  last_error_ = 0;
}

bool Statement::ReadOnly() const { return sqlite3_stmt_readonly(stmt_) != 0; }

const char* Statement::Sql() const { return sqlite3_sql(stmt_); }

}  // namespace tpuemu::db
