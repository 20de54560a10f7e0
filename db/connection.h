// Connection: one open database of a Store's backend (db/sqlite_connection.h for SQLite files,
// db/postgres/pg_connection.h for a PostgreSQL server). Store (db/store.h) owns exactly one and
// serializes every use of it with its connection lease, so a Connection need not be thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "db/statement.h"

namespace tpuemu::db {

enum class Backend { kSqlite, kPostgres };

class Connection {
 public:
  Connection() = default;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  virtual ~Connection() = default;

  virtual Backend backend() const = 0;
  // One SQL statement (?N parameters), prepared for reuse.
  virtual Result<std::unique_ptr<Statement>> Prepare(std::string_view sql) = 0;
  // SQL text that may hold several statements, run once (DDL, maintenance).
  virtual Status Exec(std::string_view script) = 0;
  // Rows inserted, updated or deleted by the most recent such statement.
  virtual int64_t Changes() const = 0;

  // A read-write transaction that takes the database's write lock up front (SQLite's BEGIN
  // IMMEDIATE), so its writes never fail halfway for a lock another writer holds.
  virtual Status Begin() = 0;
  virtual Status Commit() = 0;
  virtual Status Rollback() = 0;
  virtual bool InTransaction() const = 0;

  // The schema version the migrations left (db/migrations.h).
  virtual Result<int> SchemaVersion() = 0;
  // Deletes every row of every table; identity/AUTOINCREMENT high-water marks stay.
  virtual Status WipeAll() = 0;
  // Space the store occupies and holds free for reuse, in its pages, and giving some back.
  virtual Result<int64_t> PageCount() = 0;
  virtual Result<int64_t> FreePages() = 0;
  virtual Status ReclaimFreePages(int pages) = 0;

  // Marks replica id `id` as this process's until the connection closes; FAILED_PRECONDITION when
  // another live process holds it. Only PostgreSQL has replicas (a SQLite file is one process's).
  virtual Status ClaimReplicaId(std::string_view) { return Status::Ok(); }

  // Finalizes prepared statements first (the Store drops its cache before calling). Idempotent.
  virtual Status Close() = 0;
};

}  // namespace tpuemu::db
