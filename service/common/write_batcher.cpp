#include "service/common/write_batcher.h"

namespace tpuemu::service {
namespace {

Status Exec(db::Txn& txn, std::string_view sql) {
  Result<db::Statement*> stmt = txn.Prepare(sql);
  if (!stmt.ok()) return stmt.status();
  return (*stmt)->Run();
}

}  // namespace

WriteBatcher::WriteBatcher(db::Store& store, int max_batch)
    : store_(store), max_batch_(max_batch), thread_([this] { Loop(); }) {}

WriteBatcher::~WriteBatcher() { Stop(); }

Status WriteBatcher::Run(Body body, std::function<void()> on_commit) {
  std::future<Status> done;
  {
    std::lock_guard lock(mu_);
    if (stopping_) return Status::Unavailable("tpuemud is shutting down");
    queue_.push_back({std::move(body), std::move(on_commit), {}});
    done = queue_.back().done.get_future();
  }
  cv_.notify_one();
  return done.get();
}

void WriteBatcher::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void WriteBatcher::Loop() {
  std::unique_lock lock(mu_);
  while (true) {
    cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping with nothing left
    std::deque<Item> batch;
    while (!queue_.empty() && static_cast<int>(batch.size()) < max_batch_) {
      batch.push_back(std::move(queue_.front()));
      queue_.pop_front();
    }
    lock.unlock();
    RunBatch(batch);
    lock.lock();
  }
}

void WriteBatcher::RunBatch(std::deque<Item>& batch) {
  if (before_batch_) before_batch_();
  std::vector<Status> results(batch.size());
  Status committed = store_.Transaction([&](db::Txn& txn) -> Status {
    for (std::size_t i = 0; i < batch.size(); ++i) {
      Status s = Exec(txn, "SAVEPOINT batch_item");
      if (s.ok()) {
        try {
          s = batch[i].body(txn);
        } catch (const std::exception& e) {
          s = Status::Internal(std::string("exception in a write: ") + e.what());
        }
        Status closed =
            s.ok() ? Exec(txn, "RELEASE batch_item") : Exec(txn, "ROLLBACK TO batch_item");
        if (!s.ok() && closed.ok()) closed = Exec(txn, "RELEASE batch_item");
        if (!closed.ok()) return closed;  // the transaction is unusable: fail the batch
      }
      results[i] = s;
    }
    return Status::Ok();
  });
  for (std::size_t i = 0; i < batch.size(); ++i) {
    if (committed.ok() && results[i].ok() && batch[i].on_commit) {
      try {
        batch[i].on_commit();
      } catch (...) {
        // An observer's failure must not take the writer down; the write itself is committed.
      }
    }
  }
  if (after_batch_) after_batch_();
  for (std::size_t i = 0; i < batch.size(); ++i) {
    batch[i].done.set_value(committed.ok() ? results[i] : committed);
  }
}

}  // namespace tpuemu::service
