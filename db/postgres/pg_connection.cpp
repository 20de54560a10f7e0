#include "db/postgres/pg_connection.h"

#include <libpq-fe.h>

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "db/migrations.h"
#include "db/postgres/migrations.h"
#include "db/postgres/pg_error.h"
#include "db/postgres/pg_statement.h"

namespace tpuemu::db::postgres {
namespace {

// pg_advisory_xact_lock keys: migrations ("tpuemu" in ASCII) and writes ("tpuemw").
constexpr int64_t kMigrationLock = 0x747075656d75;
constexpr int64_t kWriteLock = 0x747075656d77;
// The first key of the pg_try_advisory_lock(int, int) pair a replica holds for its whole session;
// the second is hashtext(replica id). ("tpur" in ASCII.)
constexpr int32_t kReplicaLockSpace = 0x74707572;

// Notices (e.g. "table does not exist, skipping") are not errors; keep them off stderr.
void IgnoreNotice(void*, const char*) {}

}  // namespace

std::string WithoutPassword(const std::string& url) {
  std::string out = url;
  const size_t scheme = out.find("://");
  const size_t authority = scheme == std::string::npos ? 0 : scheme + 3;
  const size_t at = out.find('@', authority);
  const size_t slash = out.find('/', authority);
  if (at != std::string::npos && (slash == std::string::npos || at < slash)) {
    const size_t colon = out.find(':', authority);
    if (colon != std::string::npos && colon < at) out.replace(colon + 1, at - colon - 1, "***");
  }
  for (size_t key = out.find("password="); key != std::string::npos;
       key = out.find("password=", key + 1)) {
    const size_t value = key + 9;
    const size_t end = out.find('&', value);
    out.replace(value, (end == std::string::npos ? out.size() : end) - value, "***");
  }
  return out;
}

Result<std::unique_ptr<PgConnection>> PgConnection::Open(const std::string& url) {
  PGconn* conn = PQconnectdb(url.c_str());
  const std::string shown = WithoutPassword(url);
  if (conn == nullptr) return Status::Internal("open " + shown + ": libpq is out of memory");
  if (PQstatus(conn) != CONNECTION_OK) {
    std::string detail = PQerrorMessage(conn);
    while (!detail.empty() && detail.back() == '\n') detail.pop_back();
    Status error = Status::Unavailable("database unreachable: open " + shown + ": " + detail);
    PQfinish(conn);
    return error;
  }
  PQsetNoticeProcessor(conn, IgnoreNotice, nullptr);
  std::unique_ptr<PgConnection> connection(new PgConnection(conn));
  Status migrated = connection->Migrate();
  if (!migrated.ok()) return Status(migrated.code(), "open " + shown + ": " + migrated.message());
  return connection;
}

PgConnection::~PgConnection() { (void)Close(); }

Status PgConnection::Close() {
  if (conn_ != nullptr) PQfinish(conn_);
  conn_ = nullptr;
  return Status::Ok();
}

PGconn* PgConnection::raw() {
  if (conn_ != nullptr && PQstatus(conn_) == CONNECTION_BAD) {
    PQreset(conn_);
    if (PQstatus(conn_) == CONNECTION_OK) {
      ++generation_;  // server-side statements are gone
      // The session lock went with the old session; without it another process may have taken
      // over, and this one must not write: drop the connection (every call then fails).
      if (!replica_id_.empty() && !ClaimReplicaId(replica_id_).ok()) {
        PQfinish(std::exchange(conn_, nullptr));
      }
    }
  }
  return conn_;
}

Status PgConnection::ClaimReplicaId(std::string_view id) {
  std::string literal = "'";
  for (char c : id) literal += c == '\'' ? std::string("''") : std::string(1, c);
  literal += "'";
  Result<int64_t> claimed =
      QueryInt("SELECT pg_try_advisory_lock(" + std::to_string(kReplicaLockSpace) + ", hashtext(" +
               literal + "))::int");
  if (!claimed.ok()) return claimed.status();
  if (*claimed != 1) {
    return Status::FailedPrecondition(
        "another tpuemud process serves this database as replica '" + std::string(id) +
        "'; give each replica its own --replica-id (the default is host:port)");
  }
  replica_id_ = std::string(id);
  // Triggers name the writer with it (tpuemu_settings notifications, migrations.cpp v8).
  return Query("SELECT set_config('tpuemu.replica', " + literal + ", false)", "name the replica")
      .status();
}

Result<std::unique_ptr<Statement>> PgConnection::Prepare(std::string_view sql) {
  // Prepared on the server at first use, when the parameters' types are known (PgStatement).
  return std::unique_ptr<Statement>(
      new PgStatement(*this, sql, "s" + std::to_string(++next_statement_)));
}

Result<std::string> PgConnection::Query(const std::string& sql, std::string_view context,
                                        int64_t* changes) {
  PGresult* result = PQexec(raw(), sql.c_str());
  const ExecStatusType status = PQresultStatus(result);
  Result<std::string> out = std::string();
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
    out = PgError(conn_, result, context);
  } else {
    if (PQntuples(result) > 0 && PQnfields(result) > 0 && !PQgetisnull(result, 0, 0)) {
      out = std::string(PQgetvalue(result, 0, 0));
    }
    if (changes != nullptr) *changes = std::atoll(PQcmdTuples(result));
  }
  PQclear(result);
  return out;
}

Result<int64_t> PgConnection::QueryInt(const std::string& sql) {
  Result<std::string> value = Query(sql, "'" + sql + "'");
  if (!value.ok()) return value.status();
  return std::strtoll(value->c_str(), nullptr, 10);  // 0 for no row or NULL
}

Status PgConnection::Exec(std::string_view script) {
  return Query(std::string(script), "exec script", &changes_).status();
}

Status PgConnection::Begin() {
  // One writer at a time, as SQLite's BEGIN IMMEDIATE: seq values then commit in order (keyset
  // pages and the events feed never skip a row that commits late), and transactions moving rows
  // through the counter tables cannot deadlock. Reads take no lock.
  return Query("BEGIN; SELECT pg_advisory_xact_lock(" + std::to_string(kWriteLock) + ")", "begin")
      .status();
}
Status PgConnection::Commit() { return Query("COMMIT", "commit").status(); }
Status PgConnection::Rollback() { return Query("ROLLBACK", "rollback").status(); }

bool PgConnection::InTransaction() const {
  const PGTransactionStatusType status = PQtransactionStatus(conn_);
  return status == PQTRANS_INTRANS || status == PQTRANS_INERROR || status == PQTRANS_ACTIVE;
}

Result<int> PgConnection::SchemaVersion() {
  Result<int64_t> version = QueryInt("SELECT version FROM tpuemu_schema");
  if (!version.ok()) return version.status();
  return static_cast<int>(*version);
}

Status PgConnection::Migrate() {
  std::span<const Migration> migrations = Migrations();
  const int latest = migrations.empty() ? 0 : migrations.back().version;
  for (size_t i = 0; i < migrations.size(); ++i) {
    if (migrations[i].version != static_cast<int>(i) + 1) {
      return Status::Internal("migration list out of order at version " +
                              std::to_string(migrations[i].version));
    }
  }
  TPUEMU_RETURN_IF_ERROR(Begin());
  auto fail = [this](Status status) {
    (void)Rollback();
    return status;
  };
  Status status = Query("SELECT pg_advisory_xact_lock(" + std::to_string(kMigrationLock) +
                            "); CREATE TABLE IF NOT EXISTS tpuemu_schema (version BIGINT NOT NULL)",
                        "create tpuemu_schema")
                      .status();
  if (!status.ok()) return fail(status);
  Result<int64_t> rows = QueryInt("SELECT COUNT(*) FROM tpuemu_schema");
  if (!rows.ok()) return fail(rows.status());
  if (*rows == 0) {
    status = Query("INSERT INTO tpuemu_schema (version) VALUES (0)", "init tpuemu_schema").status();
    if (!status.ok()) return fail(status);
  }
  Result<int> current = SchemaVersion();
  if (!current.ok()) return fail(current.status());
  if (*current > latest) {
    return fail(Status::DataLoss("database schema version " + std::to_string(*current) +
                                 " is newer than this tpuemud (" + std::to_string(latest) + ")"));
  }
  for (const Migration& m : migrations) {
    if (m.version <= *current) continue;
    const std::string context = "migration to schema version " + std::to_string(m.version);
    status = Query(std::string(m.sql), context).status();
    if (status.ok()) {
      status = Query("UPDATE tpuemu_schema SET version = " + std::to_string(m.version), context)
                   .status();
    }
    if (!status.ok()) return fail(status);
  }
  return Commit();
}

Status PgConnection::WipeAll() {
  // One TRUNCATE of every table at once satisfies the foreign keys between them; without RESTART
  // IDENTITY the seq columns continue, so page tokens never repeat across a reset (as SQLite's
  // AUTOINCREMENT). The schema version stays.
  Result<std::string> tables = Query(
      "SELECT string_agg(quote_ident(tablename), ', ') FROM pg_tables "
      "WHERE schemaname = current_schema() AND tablename NOT IN ('tpuemu_schema', 'replicas')",
      "list tables");
  if (!tables.ok() || tables->empty()) return tables.status();
  return Query("TRUNCATE " + *tables, "wipe all tables").status();
}

Result<int64_t> PgConnection::PageCount() {
  return QueryInt(
      "SELECT pg_database_size(current_database()) / current_setting('block_size')::bigint");
}

}  // namespace tpuemu::db::postgres
