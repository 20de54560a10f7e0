#include "db/sqlite_connection.h"

#include <sqlite3.h>

#include <filesystem>
#include <system_error>
#include <utility>
#include <vector>

#include "db/migrations.h"
#include "db/sqlite_error.h"
#include "db/sqlite_statement.h"
#include "db/statement_helpers.h"

namespace tpuemu::db {
namespace {

constexpr std::string_view kInMemory = ":memory:";

// Closes a connection that never became a SqliteConnection.
struct ConnectionCloser {
  void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};
using ConnectionPtr = std::unique_ptr<sqlite3, ConnectionCloser>;

Status ExecRaw(sqlite3* db, const char* sql, std::string_view context) {
  return SqliteError(db, sqlite3_exec(db, sql, nullptr, nullptr, nullptr), context);
}

// PRAGMA journal_mode answers with the mode actually in effect; WAL can be refused (e.g. on a
// filesystem without shared memory), and we would rather fail loudly than run without it.
Status EnableWal(sqlite3* db, const std::string& path) {
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v2(db, "PRAGMA journal_mode = WAL", -1, &stmt, nullptr);
  if (rc != SQLITE_OK) return SqliteError(db, rc, "open " + path + ": set journal_mode");
  rc = sqlite3_step(stmt);
  std::string mode;
  if (rc == SQLITE_ROW) mode = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
  sqlite3_finalize(stmt);
  if (rc != SQLITE_ROW) return SqliteError(db, rc, "open " + path + ": set journal_mode");
  if (mode != "wal") {
    return Status::Internal("open " + path + ": journal_mode is '" + mode + "', not 'wal'");
  }
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<SqliteConnection>> SqliteConnection::Open(
    const std::string& path, std::chrono::milliseconds busy_timeout) {
  const bool in_memory = path == kInMemory;
  if (!in_memory) {
    std::filesystem::path parent = std::filesystem::path(path).parent_path();
    std::error_code ec;
    if (!parent.empty()) std::filesystem::create_directories(parent, ec);
    if (ec) {
      return Status::Internal("open " + path + ": cannot create folder " + parent.string() + ": " +
                              ec.message());
    }
  }

  sqlite3* raw = nullptr;
  // NOMUTEX: the Store's connection lease serializes every use of the connection.
  int rc =
      sqlite3_open_v2(path.c_str(), &raw,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  ConnectionPtr db(raw);
  if (rc != SQLITE_OK) return SqliteError(raw, rc, "open " + path);

  sqlite3_extended_result_codes(db.get(), 1);  // so SqliteError can tell PRIMARYKEY from NOTNULL
  sqlite3_busy_timeout(db.get(), static_cast<int>(busy_timeout.count()));
  if (!in_memory) TPUEMU_RETURN_IF_ERROR(EnableWal(db.get(), path));
  // WAL + NORMAL: a commit is in the OS page cache before COMMIT returns, so it survives the
  // process being killed (our promise); only an OS crash/power loss may lose the latest commits.
  TPUEMU_RETURN_IF_ERROR(
      ExecRaw(db.get(), "PRAGMA synchronous = NORMAL", "open " + path + ": set synchronous"));
  TPUEMU_RETURN_IF_ERROR(
      ExecRaw(db.get(), "PRAGMA foreign_keys = ON", "open " + path + ": set foreign_keys"));
  Status migrated = Migrate(db.get());
  if (!migrated.ok()) {
    return Status(migrated.code(), "open " + path + ": " + migrated.message());
  }
  // Every body of a group commit runs in its own SAVEPOINT (service/common/write_batcher.cpp), and
  // SQLite journals the pages a savepoint changes in a statement journal, a temporary FILE past
  // 64 KiB by default: a batch of 128 creates wrote megabytes there, 12 pwrites for each one to the
  // WAL (bench/http). In memory it is a memcpy. Set after Migrate, so the one-off VACUUM of an old
  // store still builds its copy on disk.
  TPUEMU_RETURN_IF_ERROR(
      ExecRaw(db.get(), "PRAGMA temp_store = MEMORY", "open " + path + ": set temp_store"));
  return std::unique_ptr<SqliteConnection>(new SqliteConnection(path, db.release()));
}

SqliteConnection::~SqliteConnection() { (void)Close(); }

Status SqliteConnection::Close() {
  if (db_ == nullptr) return Status::Ok();
  int rc = sqlite3_close(db_);
  if (rc != SQLITE_OK) return SqliteError(db_, rc, "close " + path_);
  db_ = nullptr;
  return Status::Ok();
}

Result<std::unique_ptr<Statement>> SqliteConnection::Prepare(std::string_view sql) {
  Result<std::unique_ptr<SqliteStatement>> stmt =
      SqliteStatement::Prepare(db_, sql, /*persistent=*/true);
  if (!stmt.ok()) return stmt.status();
  return std::unique_ptr<Statement>(std::move(stmt).value());
}

Status SqliteConnection::Exec(std::string_view script) {
  std::string text(script);  // sqlite3_exec needs a NUL-terminated string
  return ExecRaw(db_, text.c_str(), "exec script");
}

int64_t SqliteConnection::Changes() const { return sqlite3_changes64(db_); }

Status SqliteConnection::Begin() { return ExecRaw(db_, "BEGIN IMMEDIATE", "begin"); }
Status SqliteConnection::Commit() { return ExecRaw(db_, "COMMIT", "commit"); }
Status SqliteConnection::Rollback() { return ExecRaw(db_, "ROLLBACK", "rollback"); }
bool SqliteConnection::InTransaction() const { return !sqlite3_get_autocommit(db_); }

Result<int64_t> SqliteConnection::Pragma(const char* sql) {
  TPUEMU_PREPARE_OR_RETURN(stmt, Prepare(sql));
  Result<bool> row = stmt.Step();
  if (!row.ok()) return row.status();
  return *row ? stmt.ColumnInt64(0) : 0;
}

Result<int> SqliteConnection::SchemaVersion() {
  Result<int64_t> version = Pragma("PRAGMA user_version");
  if (!version.ok()) return version.status();
  return static_cast<int>(*version);
}

Result<int64_t> SqliteConnection::PageCount() { return Pragma("PRAGMA page_count"); }
Result<int64_t> SqliteConnection::FreePages() { return Pragma("PRAGMA freelist_count"); }

Status SqliteConnection::ReclaimFreePages(int pages) {
  // The database runs with auto_vacuum=INCREMENTAL (migration v5): this returns up to `pages`
  // free pages to the file system, in a write transaction of its own.
  TPUEMU_RETURN_IF_ERROR(Begin());
  Status status = Exec("PRAGMA incremental_vacuum(" + std::to_string(pages) + ")");
  if (status.ok()) return Commit();
  (void)Rollback();
  return status;
}

Status SqliteConnection::WipeAll() {
  // Child tables may reference parents; check foreign keys at COMMIT, when every table is empty,
  // instead of after each DELETE.
  TPUEMU_RETURN_IF_ERROR(Exec("PRAGMA defer_foreign_keys = ON"));
  std::vector<std::string> tables;
  {
    TPUEMU_PREPARE_OR_RETURN(
        stmt, Prepare("SELECT name FROM sqlite_schema WHERE type = 'table' "
                      "AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name <> 'replicas'"));
    for (;;) {
      Result<bool> row = stmt.Step();
      if (!row.ok()) return row.status();
      if (!*row) break;
      tables.push_back(stmt.ColumnText(0));
    }
  }
  // Twice: the first pass empties every table, but the triggers that keep the counter tables
  // (node_state_counts, ...) may refill one emptied before its source; the second pass finds the
  // sources empty and clears what they left.
  for (int pass = 0; pass < 2; ++pass) {
    for (const std::string& table : tables) {
      std::string quoted;
      for (char c : table) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
      TPUEMU_RETURN_IF_ERROR(Exec("DELETE FROM \"" + quoted + "\""));
    }
  }
  return Status::Ok();
}

}  // namespace tpuemu::db
