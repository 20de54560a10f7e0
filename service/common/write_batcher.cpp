#include "service/common/write_batcher.h"

#include <memory>

namespace tpuemu::service {
namespace {

// The batcher whose thread this is (null on every other thread): Run() from there cannot wait.
thread_local const WriteBatcher* running_batcher = nullptr;

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
  if (running_batcher == this) {
    Status s = store_.Transaction(body);
    if (s.ok() && on_commit) on_commit();
    return s;
  }
  auto done = std::make_shared<std::promise<Status>>();
  std::future<Status> result = done->get_future();
  Submit(std::move(body), std::move(on_commit),
         [done](Status s) { done->set_value(std::move(s)); });
  return result.get();
}

void WriteBatcher::Submit(Body body, std::function<void()> on_commit,
                          std::function<void(Status)> on_done, bool urgent) {
  {
    std::lock_guard lock(mu_);
    if (!stopping_) {
      (urgent ? urgent_ : queue_)
          .push_back({std::move(body), std::move(on_commit), std::move(on_done),
                      std::chrono::steady_clock::now()});
      cv_.notify_one();
      return;
    }
  }
  if (on_done) on_done(Status::Unavailable("tpuemud is shutting down"));
}

int64_t WriteBatcher::QueueDelayMs(bool urgent) const {
  std::lock_guard lock(mu_);
  const std::deque<Item>& q = urgent ? urgent_ : queue_;
  if (q.empty()) return 0;
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                               q.front().queued_at)
      .count();
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
  running_batcher = this;
  std::unique_lock lock(mu_);
  while (true) {
    cv_.wait(lock, [this] { return stopping_ || !queue_.empty() || !urgent_.empty(); });
    if (queue_.empty() && urgent_.empty()) return;  // stopping with nothing left
    std::deque<Item> batch;
    for (std::deque<Item>* q : {&urgent_, &queue_}) {
      while (!q->empty() && static_cast<int>(batch.size()) < max_batch_) {
        batch.push_back(std::move(q->front()));
        q->pop_front();
      }
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
    if (batch[i].on_done) batch[i].on_done(committed.ok() ? results[i] : committed);
  }
}

}  // namespace tpuemu::service
