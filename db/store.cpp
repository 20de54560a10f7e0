#include "db/store.h"

#include <exception>
#include <utility>

#include "db/postgres/pg_connection.h"
#include "db/sqlite_connection.h"

namespace tpuemu::db {

bool IsPostgresUrl(const std::string& location) {
  return location.starts_with("postgresql://") || location.starts_with("postgres://");
}

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
  return store_.conn_->Exec(sql);
}

int64_t Txn::Changes() const { return store_.conn_->Changes(); }

void Txn::ResetUsed() {
  for (Statement* stmt : used_) stmt->Reset();
  used_.clear();
}

// ---- Store ------------------------------------------------------------------------------------

Result<std::unique_ptr<Store>> Store::Open(const std::string& location) {
  if (location.empty()) return Status::Internal("database path is empty");
  std::unique_ptr<Connection> connection;
  if (IsPostgresUrl(location)) {
    Result<std::unique_ptr<postgres::PgConnection>> pg = postgres::PgConnection::Open(location);
    if (!pg.ok()) return pg.status();
    connection = std::move(pg).value();
  } else {
    Result<std::unique_ptr<SqliteConnection>> sqlite =
        SqliteConnection::Open(location, kBusyTimeout);
    if (!sqlite.ok()) return sqlite.status();
    connection = std::move(sqlite).value();
  }
  return std::unique_ptr<Store>(new Store(Describe(location), std::move(connection)));
}

std::string Store::Describe(const std::string& location) {
  return IsPostgresUrl(location) ? postgres::WithoutPassword(location) : location;
}

Store::~Store() { (void)Close(); }

Status Store::Close() {
  if (owner_.load() == std::this_thread::get_id()) {
    return Status::Internal("Store::Close inside a transaction body");
  }
  // No timeout: closing must wait for in-flight transactions to finish.
  (void)AcquireLease(std::chrono::milliseconds::max());
  Status status;
  if (conn_ != nullptr) {
    statements_.clear();  // finalizes; a connection refuses to close while statements are live
    status = conn_->Close();
    if (status.ok()) conn_.reset();
  }
  ReleaseLease();
  return status;
}

Result<int> Store::SchemaVersion() {
  return Ask<int>([](Connection& connection) { return connection.SchemaVersion(); });
}

Result<int64_t> Store::PageCount() {
  return Ask<int64_t>([](Connection& connection) { return connection.PageCount(); });
}

Result<int64_t> Store::FreePages() {
  return Ask<int64_t>([](Connection& connection) { return connection.FreePages(); });
}

Status Store::ReclaimFreePages(int pages) {
  return WithConnection([&](Connection& connection) { return connection.ReclaimFreePages(pages); });
}

Status Store::Transaction(const std::function<Status(Txn&)>& body) { return Run(true, body); }

Status Store::Read(const std::function<Status(Txn&)>& body) { return Run(false, body); }

Status Store::Run(bool writable, const std::function<Status(Txn&)>& body) {
  return WithConnection([&](Connection& connection) -> Status {
    // Only a failure inside the rollback path below could leave a transaction open; never let it
    // swallow the next caller's writes.
    if (connection.InTransaction()) (void)connection.Rollback();

    Txn txn(*this, writable);
    Status status = writable ? connection.Begin() : Status::Ok();
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
      if (status.ok()) status = connection.Commit();
      // COMMIT can fail and leave the transaction open (e.g. SQLITE_BUSY); roll back either way.
      if (!status.ok() && connection.InTransaction()) (void)connection.Rollback();
    }
    return status;
  });
}

Status Store::WithConnection(const std::function<Status(Connection&)>& body) {
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
  if (conn_ == nullptr) return Status::Internal("store " + path_ + " is closed");
  owner_.store(std::this_thread::get_id());
  return body(*conn_);
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
  Result<std::unique_ptr<Statement>> prepared = conn_->Prepare(sql);
  if (!prepared.ok()) return prepared.status();
  Statement* out = prepared->get();
  statements_.emplace(std::move(key), std::move(prepared).value());
  return out;
}

Status Store::ClaimReplicaId(std::string_view id) {
  return WithConnection([id](Connection& connection) { return connection.ClaimReplicaId(id); });
}

Status Store::WipeAll() {
  return Transaction([this](Txn&) { return conn_->WipeAll(); });
}

}  // namespace tpuemu::db
