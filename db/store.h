// Store: the tpuemu database — one connection to SQLite (a file, or ":memory:") or to PostgreSQL
// (a postgresql:// URL), migrations, transactions, statement cache. Durability is the backend's:
// db/sqlite_connection.h and db/postgres/pg_connection.h; either way, once Transaction() returned
// OK its change survives a kill -9 of tpuemud.
//
// Threads: the Store owns one Connection; every public method may be called from any thread. A
// thread uses the connection only while it holds the connection lease (in_use_, handed out under
// mu_). Transaction() and Read() hold the lease for the whole body, so a body should do one state
// change's worth of SQL and nothing slow. Waiting for the lease (or for another process's write
// lock) is bounded by kBusyTimeout; past it the call returns kUnavailable.
//
// Errors: every call returns a Status / Result; nothing throws across this API. An exception
// escaping a transaction body is caught, the transaction rolled back, and kInternal returned with
// the exception's what().
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "db/connection.h"
#include "db/statement.h"

namespace tpuemu::db {

class Store;

// True for a postgresql:// or postgres:// location: Store::Open and the change feed pick
// PostgreSQL for it, SQLite for anything else.
bool IsPostgresUrl(const std::string& location);

// The handle a Transaction()/Read() body runs SQL through. Only valid inside the body it was
// passed to; it borrows the Store's connection, whose lease the calling thread holds meanwhile.
class Txn {
 public:
  Txn(const Txn&) = delete;
  Txn& operator=(const Txn&) = delete;

  // The cached statement for `sql` (one SQL statement), reset and with bindings cleared. The
  // pointer stays valid until the body returns; preparing the same SQL again resets it, so do not
  // interleave two uses of one SQL text. In a Read() body only read-only SQL is allowed (kInvalid).
  Result<Statement*> Prepare(std::string_view sql);
  // Runs SQL text that may hold several statements, without caching (DDL, maintenance).
  Status ExecScript(std::string_view sql);
  // Rows inserted, updated or deleted by the most recent such statement.
  int64_t Changes() const;
  bool writable() const { return writable_; }

 private:
  friend class Store;
  Txn(Store& store, bool writable) : store_(store), writable_(writable) {}
  void ResetUsed();  // releases the statements' read snapshots when the body ends

  Store& store_;
  const bool writable_;
  std::vector<Statement*> used_;  // statements prepared by this body (owned by the Store)
};

class Store {
 public:
  // How long a caller waits for the connection (and SQLite for another process's lock).
  static constexpr std::chrono::milliseconds kBusyTimeout{5000};

  // Opens the database `location` names and applies pending migrations (db/migrations.h):
  // a PostgreSQL server for "postgresql://..." or "postgres://..." (libpq's URL form), a private
  // in-memory SQLite database for ":memory:", else a SQLite file (created if needed, with its
  // parent folders). Errors: kInvalid for an empty location, kUnavailable when the server cannot
  // be reached, kInternal when the file cannot be created or opened, kDataLoss when it is not a
  // tpuemu database or its schema is newer than this build.
  static Result<std::unique_ptr<Store>> Open(const std::string& location);
  // `location` as logs may show it: a PostgreSQL URL without its password.
  static std::string Describe(const std::string& location);

  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;
  ~Store();  // Close(), ignoring its status

  // Runs `body` inside BEGIN IMMEDIATE ... COMMIT. If the body returns non-OK, throws, or COMMIT
  // fails, the transaction is rolled back and that status returned (kIoError for an exception).
  // Calling Transaction()/Read() from inside a body returns kInvalid (no nesting).
  Status Transaction(const std::function<Status(Txn&)>& body);
  // Runs a read-only `body` (autocommit; each statement sees every committed write).
  Status Read(const std::function<Status(Txn&)>& body);
  // Read() for a body that produces a value: the body's result, or Read()'s own error.
  template <typename T>
  Result<T> ReadResult(const std::function<Result<T>(Txn&)>& body) {
    std::optional<Result<T>> out;
    Status status = Read([&](Txn& txn) -> Status {
      out.emplace(body(txn));
      return out->ok() ? Status::Ok() : out->status();
    });
    if (!status.ok()) return status;
    return std::move(*out);
  }

  // Deletes every row of every table in one transaction (POST /_emulator/reset). The schema and
  // the AUTOINCREMENT high-water marks (sqlite_sequence) stay, so `seq` values, and the page
  // tokens built from them, never repeat across a reset.
  Status WipeAll();

  // Finalizes the cached statements and closes the connection (checkpointing the WAL). Later calls
  // on this Store return kInvalid. Idempotent.
  Status Close();

  // Describe() of the location Open() was given.
  const std::string& path() const { return path_; }
  Backend backend() const { return backend_; }
  // The schema version of the open database (db/migrations.h).
  Result<int> SchemaVersion();
  // The database's size and its free space, in pages, and returning up to `pages` free pages to
  // the file system (SQLite's incremental vacuum; PostgreSQL's autovacuum does this itself).
  Result<int64_t> PageCount();
  Result<int64_t> FreePages();
  Status ReclaimFreePages(int pages);
  // For the serving process: FAILED_PRECONDITION when another live process serves this database
  // as replica `id` (PostgreSQL; always OK on SQLite). Held until Close().
  Status ClaimReplicaId(std::string_view id);

 private:
  friend class Txn;
  Store(std::string path, std::unique_ptr<Connection> connection)
      : path_(std::move(path)), backend_(connection->backend()), conn_(std::move(connection)) {}

  // Takes the connection lease, waiting at most `timeout`; false on timeout.
  bool AcquireLease(std::chrono::milliseconds timeout);
  void ReleaseLease();
  // Runs `body` holding the lease; `writable` wraps it in Begin()/Commit().
  Status Run(bool writable, const std::function<Status(Txn&)>& body);
  // Runs `body` on the connection holding the lease (refused from inside another body: no
  // nesting); Run() and the questions outside any Txn go through it.
  Status WithConnection(const std::function<Status(Connection&)>& body);
  // WithConnection() for a question: the body's answer, or the lease's error.
  template <typename T>
  Result<T> Ask(const std::function<Result<T>(Connection&)>& body) {
    std::optional<Result<T>> out;
    Status status = WithConnection([&](Connection& connection) {
      out.emplace(body(connection));
      return out->status();
    });
    if (!out.has_value()) return status;
    return std::move(*out);
  }
  // Requires the lease. The cached statement for `sql`, prepared on first use.
  Result<Statement*> CachedStatement(std::string_view sql);

  const std::string path_;
  const Backend backend_;
  // A lease rather than a mutex held across the body: it gives the bounded wait (kBusyTimeout)
  // without std::timed_mutex, whose clocklock ThreadSanitizer does not see.
  std::mutex mu_;
  std::condition_variable idle_;  // notified when in_use_ turns false
  bool in_use_ = false;           // guarded by mu_; true while one thread holds the lease

  std::unique_ptr<Connection> conn_;  // guarded by the lease; null once closed
  // Guarded by the lease. Keyed by SQL text; unique_ptr keeps Statement* stable across rehashes.
  std::unordered_map<std::string, std::unique_ptr<Statement>> statements_;
  // The thread currently inside a body (default id when none), to refuse nested calls without
  // deadlocking. Written only by the lease holder; atomic because other threads read it unlocked.
  std::atomic<std::thread::id> owner_{};
};

}  // namespace tpuemu::db
