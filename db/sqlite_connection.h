// SqliteConnection: a Connection (db/connection.h) to one SQLite file, or a private in-memory
// database for ":memory:".
//
// Durability: file databases run with journal_mode=WAL and synchronous=NORMAL. In that mode a
// COMMIT is appended to the WAL with write(2) before Commit() returns, so once it returned OK the
// change survives a crash of the process (kill -9, abort, OOM kill). What NORMAL gives up is
// durability against an OS crash or power loss (the last commits may roll back; the database stays
// consistent). Surviving kill -9 is tpuemud's promise, so we do not pay an fsync per commit.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "db/connection.h"

struct sqlite3;

namespace tpuemu::db {

class SqliteConnection final : public Connection {
 public:
  // Opens (creating if needed, including parent folders) the database at `path` and applies
  // pending migrations (db/migrations.h). `busy_timeout` bounds waiting for another process's lock.
  static Result<std::unique_ptr<SqliteConnection>> Open(const std::string& path,
                                                        std::chrono::milliseconds busy_timeout);
  ~SqliteConnection() override;

  Backend backend() const override { return Backend::kSqlite; }
  Result<std::unique_ptr<Statement>> Prepare(std::string_view sql) override;
  Status Exec(std::string_view script) override;
  int64_t Changes() const override;
  Status Begin() override;
  Status Commit() override;
  Status Rollback() override;
  bool InTransaction() const override;
  Result<int> SchemaVersion() override;
  Status WipeAll() override;
  Result<int64_t> PageCount() override;
  Result<int64_t> FreePages() override;
  Status ReclaimFreePages(int pages) override;
  Status Close() override;

 private:
  SqliteConnection(std::string path, sqlite3* db) : path_(std::move(path)), db_(db) {}
  Result<int64_t> Pragma(const char* sql);

  const std::string path_;
  sqlite3* db_;  // owned; null once closed
};

}  // namespace tpuemu::db
