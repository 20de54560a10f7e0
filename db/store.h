// Store: the tpuemu SQLite database — one connection, migrations, transactions, statement cache.
//
// Durability: file databases run with journal_mode=WAL and synchronous=NORMAL. In that mode a
// COMMIT is appended to the WAL with write(2) before Transaction() returns, so once Transaction()
// has returned OK the change survives a crash of the process (kill -9, abort, OOM kill). What
// NORMAL gives up is durability against an OS crash or power loss (the last commits may roll back;
// the database stays consistent). Surviving kill -9 is tpuemud's promise, so we do not pay an
// fsync per commit. ":memory:" databases are throwaway and durable against nothing.
//
// Threads: the Store owns one sqlite3 connection; every public method may be called from any
// thread. A thread uses the connection only while it holds the connection lease (in_use_, handed
// out under mu_). Transaction() and Read() hold the lease for the whole body, so a body should do
// one state change's worth of SQL and nothing slow. Waiting for the lease (or for another process's
// write lock, via busy_timeout) is bounded by kBusyTimeout; past it the call returns kBusy.
//
// Errors: every call returns a Status / DbResult; nothing throws across this API. An exception
// escaping a transaction body is caught, the transaction rolled back, and kIoError returned with
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
#include "db/statement.h"

struct sqlite3;

namespace tpuemu::db {

class Store;

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

  // Opens (creating if needed, including parent folders) the database at `path`, or a private
  // in-memory one for ":memory:", and applies pending migrations (db/migrations.h). Errors:
  // kInvalid for an empty path, kIoError when the file cannot be created or opened, kCorruption
  // when it is not a SQLite database or its schema is newer than this build.
  static Result<std::unique_ptr<Store>> Open(const std::string& path);

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

  const std::string& path() const { return path_; }
  // PRAGMA user_version of the open database.
  Result<int> SchemaVersion();

 private:
  friend class Txn;
  Store(std::string path, sqlite3* db) : path_(std::move(path)), db_(db) {}

  // Takes the connection lease, waiting at most `timeout`; false on timeout.
  bool AcquireLease(std::chrono::milliseconds timeout);
  void ReleaseLease();
  // Runs `body` holding the lease; `writable` wraps it in BEGIN IMMEDIATE/COMMIT.
  Status Run(bool writable, const std::function<Status(Txn&)>& body);
  // Requires the lease. The cached statement for `sql`, prepared on first use.
  Result<Statement*> CachedStatement(std::string_view sql);
  Status RunCached(std::string_view sql);  // requires the lease

  const std::string path_;
  // A lease rather than a mutex held across the body: it gives the bounded wait (kBusyTimeout)
  // without std::timed_mutex, whose clocklock ThreadSanitizer does not see.
  std::mutex mu_;
  std::condition_variable idle_;  // notified when in_use_ turns false
  bool in_use_ = false;           // guarded by mu_; true while one thread holds the lease

  sqlite3* db_;  // guarded by the lease; owned; null once closed
  // Guarded by the lease. Keyed by SQL text; unique_ptr keeps Statement* stable across rehashes.
  std::unordered_map<std::string, std::unique_ptr<Statement>> statements_;
  // The thread currently inside a body (default id when none), to refuse nested calls without
  // deadlocking. Written only by the lease holder; atomic because other threads read it unlocked.
  std::atomic<std::thread::id> owner_{};
};

}  // namespace tpuemu::db
