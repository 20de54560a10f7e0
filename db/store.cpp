#include "db/store.h"

#include <sqlite3.h>

#include <exception>
#include <filesystem>
#include <system_error>
#include <utility>

#include "db/migrations.h"

namespace tpuemu::db {
namespace {

constexpr std::string_view kInMemory = ":memory:";

// Closes a connection that never became a Store.
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

// ---- Txn --------------------------------------------------------------------------------------

Result<Statement*> Txn::Prepare(std::string_view sql) {
  Result<Statement*> stmt = store_.CachedStatement(sql);
  if (!stmt.ok()) return stmt;
  if (!writable_ && !(*stmt)->ReadOnly()) {
    return Status::Internal("statement writes inside Store::Read: '" + std::string(sql) + "'");
  }
  (*stmt)->Reset();
  if (used_.empty() || used_.back() != *stmt) used_.push_back(*stmt);  // no growth in a Get loop
  return stmt;
}

Status Txn::ExecScript(std::string_view sql) {
  if (!writable_) return Status::Internal("ExecScript inside Store::Read");
  std::string text(sql);  // sqlite3_exec needs a NUL-terminated string
  return ExecRaw(store_.db_, text.c_str(), "exec script");
}

int64_t Txn::Changes() const { return sqlite3_changes64(store_.db_); }

void Txn::ResetUsed() {
  for (Statement* stmt : used_) stmt->Reset();
  used_.clear();
}

// ---- Store ------------------------------------------------------------------------------------

Result<std::unique_ptr<Store>> Store::Open(const std::string& path) {
  if (path.empty()) return Status::Internal("database path is empty");
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
  // NOMUTEX: the Store's own mutex serializes every use of the connection.
  int rc =
      sqlite3_open_v2(path.c_str(), &raw,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  ConnectionPtr db(raw);
  if (rc != SQLITE_OK) return SqliteError(raw, rc, "open " + path);

  sqlite3_extended_result_codes(db.get(), 1);  // so SqliteError can tell PRIMARYKEY from NOTNULL
  sqlite3_busy_timeout(db.get(), static_cast<int>(kBusyTimeout.count()));
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
  return std::unique_ptr<Store>(new Store(path, db.release()));
}

Store::~Store() { (void)Close(); }

Status Store::Close() {
  if (owner_.load() == std::this_thread::get_id()) {
    return Status::Internal("Store::Close inside a transaction body");
  }
  // No timeout: closing must wait for in-flight transactions to finish.
  (void)AcquireLease(std::chrono::milliseconds::max());
  Status status;
  if (db_ != nullptr) {
    statements_.clear();  // finalizes; sqlite3_close refuses while statements are live
    int rc = sqlite3_close(db_);
    if (rc == SQLITE_OK) {
      db_ = nullptr;
    } else {
      status = SqliteError(db_, rc, "close " + path_);
    }
  }
  ReleaseLease();
  return status;
}

Result<int> Store::SchemaVersion() {
  int version = 0;
  Status status = Read([&](Txn& txn) -> Status {
    Result<Statement*> stmt = txn.Prepare("PRAGMA user_version");
    if (!stmt.ok()) return stmt.status();
    Result<bool> row = (*stmt)->Step();
    if (!row.ok()) return row.status();
    version = *row ? static_cast<int>((*stmt)->ColumnInt64(0)) : 0;
    return Status::Ok();
  });
  if (!status.ok()) return status;
  return version;
}

Status Store::Transaction(const std::function<Status(Txn&)>& body) { return Run(true, body); }

Status Store::Read(const std::function<Status(Txn&)>& body) { return Run(false, body); }

Status Store::Run(bool writable, const std::function<Status(Txn&)>& body) {
  if (owner_.load() == std::this_thread::get_id()) {
    return Status::Internal("nested Store::Transaction/Read on one thread");
  }
  if (!AcquireLease(kBusyTimeout)) {
    return Status::Unavailable("database connection busy for more than " +
                               std::to_string(kBusyTimeout.count()) + " ms");
  }
  // Releases on every path out, including an exception from std::string or the allocator.
  struct LeaseHolder {
    Store* store;
    ~LeaseHolder() {
      store->owner_.store(std::thread::id());
      store->ReleaseLease();
    }
  } holder{this};
  if (db_ == nullptr) return Status::Internal("store " + path_ + " is closed");
  owner_.store(std::this_thread::get_id());

  // Only a failure inside the rollback path below could leave a transaction open; never let it
  // swallow the next caller's writes.
  if (!sqlite3_get_autocommit(db_)) (void)RunCached("ROLLBACK");

  Txn txn(*this, writable);
  Status status = writable ? RunCached("BEGIN IMMEDIATE") : Status::Ok();
  const bool began = writable && status.ok();
  if (status.ok()) {
    try {
      status = body(txn);
    } catch (const std::exception& e) {
      status = Status::Internal(std::string("exception in transaction body: ") + e.what());
    } catch (...) {
      status = Status::Internal("unknown exception in transaction body");
    }
  }
  txn.ResetUsed();
  if (began) {
    if (status.ok()) status = RunCached("COMMIT");
    // COMMIT can fail and leave the transaction open (e.g. SQLITE_BUSY); roll back either way.
    if (!status.ok() && !sqlite3_get_autocommit(db_)) (void)RunCached("ROLLBACK");
  }
  return status;
}

bool Store::AcquireLease(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  auto idle = [this] { return !in_use_; };
  if (timeout == std::chrono::milliseconds::max()) {
    idle_.wait(lock, idle);
  } else if (!idle_.wait_for(lock, timeout, idle)) {
    return false;
  }
  in_use_ = true;
  return true;
}

void Store::ReleaseLease() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    in_use_ = false;
  }
  idle_.notify_one();
}

Result<Statement*> Store::CachedStatement(std::string_view sql) {
  std::string key(sql);
  auto it = statements_.find(key);
  if (it != statements_.end()) return it->second.get();
  Result<Statement> prepared = Statement::Prepare(db_, sql, /*persistent=*/true);
  if (!prepared.ok()) return prepared.status();
  auto owned = std::make_unique<Statement>(std::move(prepared).value());
  Statement* out = owned.get();
  statements_.emplace(std::move(key), std::move(owned));
  return out;
}

Status Store::RunCached(std::string_view sql) {
  Result<Statement*> stmt = CachedStatement(sql);
  if (!stmt.ok()) return stmt.status();
  (*stmt)->Reset();
  Status status = (*stmt)->Run();
  (*stmt)->Reset();
  return status;
}

Status Store::WipeAll() {
  return Transaction([](Txn& txn) -> Status {
    // Child tables added later may reference parents; check foreign keys at COMMIT, when every
    // table is empty, instead of after each DELETE.
    TPUEMU_RETURN_IF_ERROR(txn.ExecScript("PRAGMA defer_foreign_keys = ON"));
    std::vector<std::string> tables;
    {
      Result<Statement*> stmt = txn.Prepare(
          "SELECT name FROM sqlite_schema WHERE type = 'table' "
          "AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'");
      if (!stmt.ok()) return stmt.status();
      for (;;) {
        Result<bool> row = (*stmt)->Step();
        if (!row.ok()) return row.status();
        if (!*row) break;
        tables.push_back((*stmt)->ColumnText(0));
      }
    }
    // Twice: the first pass empties every table, but the triggers that keep the counter tables
    // (node_state_counts, ...) may refill one emptied before its source; the second pass
    // finds the sources empty and clears what they left.
    for (int pass = 0; pass < 2; ++pass) {
      for (const std::string& table : tables) {
        std::string quoted;
        for (char c : table) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
        TPUEMU_RETURN_IF_ERROR(txn.ExecScript("DELETE FROM \"" + quoted + "\""));
      }
    }
    return Status::Ok();
  });
}

}  // namespace tpuemu::db
