// PgConnection: a Connection (db/connection.h) to a PostgreSQL server through libpq, opened from a
// postgresql:// URL (libpq's connection URI: host, port, user, database, sslmode, ...).
//
// Durability: PostgreSQL's defaults (synchronous_commit=on) flush a commit's WAL to disk before
// COMMIT returns, so an acknowledged change survives a kill -9 of tpuemud and of the server.
//
// Schema: the table tpuemu_schema holds the version db/postgres/migrations.h's list reached.
// Opening applies the pending migrations in one transaction under an advisory lock, so replicas
// starting together on a fresh database migrate it once.
//
// A connection the server dropped (restart, network) is reset on the next Begin() or statement;
// statements prepared before are prepared again (generation()).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "db/connection.h"

struct pg_conn;

namespace tpuemu::db::postgres {

// `url` with its password (user:PASSWORD@ or password=PASSWORD) replaced by "***", for logs and
// error messages.
std::string WithoutPassword(const std::string& url);

class PgConnection final : public Connection {
 public:
  // Connects to `url` and migrates the database. Errors: kUnavailable when the server cannot be
  // reached, kDataLoss when its schema is newer than this build, or the failing migration's.
  static Result<std::unique_ptr<PgConnection>> Open(const std::string& url);
  ~PgConnection() override;

  Backend backend() const override { return Backend::kPostgres; }
  Result<std::unique_ptr<Statement>> Prepare(std::string_view sql) override;
  Status Exec(std::string_view script) override;
  int64_t Changes() const override { return changes_; }
  Status Begin() override;
  Status Commit() override;
  Status Rollback() override;
  bool InTransaction() const override;
  Result<int> SchemaVersion() override;
  Status WipeAll() override;
  Result<int64_t> PageCount() override;
  Result<int64_t> FreePages() override { return int64_t{0}; }  // autovacuum's business
  Status ReclaimFreePages(int) override { return Status::Ok(); }
  Status Close() override;
  // A session advisory lock on the replica id, held while this connection lives (and taken again
  // after a reconnect): two live processes never serve under one id.
  Status ClaimReplicaId(std::string_view id) override;

  // For PgStatement: the live libpq connection, reconnected if the server dropped it.
  pg_conn* raw();
  // Bumped by every reconnect: statements prepared in an older generation prepare again.
  uint64_t generation() const { return generation_; }
  void set_changes(int64_t changes) { changes_ = changes; }

 private:
  explicit PgConnection(pg_conn* conn) : conn_(conn) {}
  Status Migrate();
  // Runs `sql` (one or more statements) on the live connection: the first column of the last
  // statement's first row ("" for none or NULL), or its error named by `context`. `changes`, when
  // given, receives the rows that statement inserted, updated or deleted.
  Result<std::string> Query(const std::string& sql, std::string_view context,
                            int64_t* changes = nullptr);
  // Query() for a one-number answer (0 for no row or NULL).
  Result<int64_t> QueryInt(const std::string& sql);

  pg_conn* conn_;  // owned; null once closed
  uint64_t generation_ = 1;
  int64_t changes_ = 0;
  uint64_t next_statement_ = 0;  // names server-side prepared statements s1, s2, ...
  std::string replica_id_;       // ClaimReplicaId() succeeded; re-claimed after a reconnect
};

}  // namespace tpuemu::db::postgres
