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
// pg_try_advisory_lock key a serving process holds for its whole session ("tpuemo").
constexpr int64_t kOwnerLock = 0x747075656d6f;

// Notices (e.g. "table does not exist, skipping") are not errors; keep them off stderr.
void IgnoreNotice(void*, const char*) {}

// Runs `sql` (one or more statements); OK when the last one succeeded.
Status ExecOn(PGconn* conn, const std::string& sql, std::string_view context) {
  PGresult* result = PQexec(conn, sql.c_str());
  const ExecStatusType status = PQresultStatus(result);
  Status out = status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK
                   ? Status::Ok()
                   : PgError(conn, result, context);
  PQclear(result);
  return out;
}

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
      if (exclusive_ && !ClaimExclusiveUse().ok()) PQfinish(std::exchange(conn_, nullptr));
    }
  }
  return conn_;
}

Status PgConnection::ClaimExclusiveUse() {
  Result<int64_t> claimed =
      QueryInt("SELECT pg_try_advisory_lock(" + std::to_string(kOwnerLock) + ")::int");
  if (!claimed.ok()) return claimed.status();
  if (*claimed != 1) {
    return Status::FailedPrecondition(
        "another tpuemud process is serving this database (it holds advisory lock " +
        std::to_string(kOwnerLock) +
        "); run one tpuemud per database, or give each its own database");
  }
  exclusive_ = true;
  return Status::Ok();
}

Result<std::unique_ptr<Statement>> PgConnection::Prepare(std::string_view sql) {
  // Prepared on the server at first use, when the parameters' types are known (PgStatement).
  return std::unique_ptr<Statement>(
      new PgStatement(*this, sql, "s" + std::to_string(++next_statement_)));
}

Status PgConnection::Exec(std::string_view script) {
  PGresult* result = PQexec(raw(), std::string(script).c_str());
  const ExecStatusType status = PQresultStatus(result);
  Status out = status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK
                   ? Status::Ok()
                   : PgError(conn_, result, "exec script");
  if (out.ok()) changes_ = std::atoll(PQcmdTuples(result));
  PQclear(result);
  return out;
}

Status PgConnection::Begin() {
  // One writer at a time, as SQLite's BEGIN IMMEDIATE: seq values then commit in order (keyset
  // pages and the events feed never skip a row that commits late), and transactions moving rows
  // through the counter tables cannot deadlock. Reads take no lock.
  return ExecOn(raw(), "BEGIN; SELECT pg_advisory_xact_lock(" + std::to_string(kWriteLock) + ")",
                "begin");
}
Status PgConnection::Commit() { return ExecOn(raw(), "COMMIT", "commit"); }
Status PgConnection::Rollback() { return ExecOn(raw(), "ROLLBACK", "rollback"); }

bool PgConnection::InTransaction() const {
  const PGTransactionStatusType status = PQtransactionStatus(conn_);
  return status == PQTRANS_INTRANS || status == PQTRANS_INERROR || status == PQTRANS_ACTIVE;
}

Result<int64_t> PgConnection::QueryInt(const std::string& sql) {
  PGresult* result = PQexec(raw(), sql.c_str());
  const ExecStatusType status = PQresultStatus(result);
  Result<int64_t> out = int64_t{0};
  if (status == PGRES_TUPLES_OK) {
    if (PQntuples(result) > 0 && !PQgetisnull(result, 0, 0)) {
      out = std::strtoll(PQgetvalue(result, 0, 0), nullptr, 10);
    }
  } else if (status != PGRES_COMMAND_OK) {
    out = PgError(conn_, result, "'" + sql + "'");
  }
  PQclear(result);
  return out;
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
  Status status =
      ExecOn(conn_,
             "SELECT pg_advisory_xact_lock(" + std::to_string(kMigrationLock) +
                 "); CREATE TABLE IF NOT EXISTS tpuemu_schema (version BIGINT NOT NULL)",
             "create tpuemu_schema");
  if (!status.ok()) return fail(status);
  Result<int64_t> rows = QueryInt("SELECT COUNT(*) FROM tpuemu_schema");
  if (!rows.ok()) return fail(rows.status());
  if (*rows == 0) {
    status = ExecOn(conn_, "INSERT INTO tpuemu_schema (version) VALUES (0)", "init tpuemu_schema");
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
    status = ExecOn(conn_, std::string(m.sql), context);
    if (status.ok()) {
      status =
          ExecOn(conn_, "UPDATE tpuemu_schema SET version = " + std::to_string(m.version), context);
    }
    if (!status.ok()) return fail(status);
  }
  return Commit();
}

Status PgConnection::WipeAll() {
  // One TRUNCATE of every table at once satisfies the foreign keys between them; without RESTART
  // IDENTITY the seq columns continue, so page tokens never repeat across a reset (as SQLite's
  // AUTOINCREMENT). The schema version stays.
  PGresult* result = PQexec(raw(),
                            "SELECT string_agg(quote_ident(tablename), ', ') FROM pg_tables "
                            "WHERE schemaname = current_schema() AND tablename <> 'tpuemu_schema'");
  if (PQresultStatus(result) != PGRES_TUPLES_OK) {
    Status error = PgError(conn_, result, "list tables");
    PQclear(result);
    return error;
  }
  const std::string tables =
      PQntuples(result) > 0 && !PQgetisnull(result, 0, 0) ? PQgetvalue(result, 0, 0) : "";
  PQclear(result);
  if (tables.empty()) return Status::Ok();
  return ExecOn(conn_, "TRUNCATE " + tables, "wipe all tables");
}

Result<int64_t> PgConnection::PageCount() {
  return QueryInt(
      "SELECT pg_database_size(current_database()) / current_setting('block_size')::bigint");
}

}  // namespace tpuemu::db::postgres
