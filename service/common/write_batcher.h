// WriteBatcher: group commit. Concurrent writers hand their transaction bodies to one thread, which
// runs every body that is waiting in ONE SQLite transaction (each body inside its own SAVEPOINT, so
// a body that fails rolls back only itself) and acknowledges each writer once that transaction has
// committed. One commit (one WAL append) then serves many state changes, which is what lets SQLite
// keep up with thousands of durable creates a second on two cores.
//
// Bodies run one at a time, in arrival order, on the batcher thread: a body may read, check and
// write without any other lock (that is how NodeManager keeps read-check-write atomic). A body must
// not call Run() itself. Thread-safe; Run() blocks the caller until its body is durable or failed.
// Submit() queues a body without waiting (node transitions that fell due: the scheduler thread
// hands over every due one at once, so they share a commit instead of taking one each), and an
// urgent body goes before every queued ordinary one: a due transition never waits behind a
// backlog of client writes. QueueDelayMs() tells how far behind the batcher is, for admission.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <thread>

#include "base/status.h"
#include "db/store.h"

namespace tpuemu::service {

class WriteBatcher {
 public:
  using Body = std::function<Status(db::Txn&)>;

  // The store is borrowed and must outlive the batcher. `max_batch` bounds how many bodies share a
  // transaction (and so how long one commit holds the connection).
  explicit WriteBatcher(db::Store& store, int max_batch = 128);
  ~WriteBatcher();  // Stop()
  WriteBatcher(const WriteBatcher&) = delete;
  WriteBatcher& operator=(const WriteBatcher&) = delete;

  // Runs `body` in a shared transaction and returns its Status once the transaction committed; if
  // the commit itself fails, every body of that batch gets the failure (UNAVAILABLE/INTERNAL).
  // After Stop(): UNAVAILABLE without running the body. Called on the batcher thread itself (an
  // `on_commit` observer that writes, after its batch committed), it runs `body` in a transaction
  // of its own at once instead of waiting on itself.
  // `on_commit`, if given, runs on the batcher thread after the commit when the body succeeded, in
  // the same order as the bodies: observers see state changes in commit order. It must not call
  // Run() (that would wait on itself).
  Status Run(Body body, std::function<void()> on_commit = nullptr);
  // Queues `body` as Run does and returns at once. `on_done` (may be null) gets the body's Status
  // on the batcher thread once its batch ended, after `on_commit`; after Stop() it gets
  // UNAVAILABLE at once on the caller's thread. `urgent`: ahead of every queued ordinary body.
  void Submit(Body body, std::function<void()> on_commit, std::function<void(Status)> on_done,
              bool urgent = false);
  // How long the oldest queued body has waited, in ms (0 when none waits): urgent ones with
  // `urgent`, else ordinary ones.
  int64_t QueueDelayMs(bool urgent) const;
  // `before` runs on the batcher thread before each batch's transaction begins and `after` once it
  // ended (committed or not), before its writers are acknowledged; NodeManager brackets its read
  // cache with them. Set them before the first Run().
  void SetBatchHooks(std::function<void()> before, std::function<void()> after) {
    before_batch_ = std::move(before);
    after_batch_ = std::move(after);
  }
  // Finishes the queued bodies, then joins the thread. Idempotent.
  void Stop();

 private:
  struct Item {
    Body body;
    std::function<void()> on_commit;
    std::function<void(Status)> on_done;
    std::chrono::steady_clock::time_point queued_at;
  };
  void Loop();
  void RunBatch(std::deque<Item>& batch);

  db::Store& store_;
  const int max_batch_;
  std::function<void()> before_batch_;  // set before the first Run(); then read by the thread only
  std::function<void()> after_batch_;   // likewise
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Item> urgent_;  // guarded by mu_; taken before queue_
  std::deque<Item> queue_;   // guarded by mu_
  bool stopping_ = false;    // guarded by mu_
  std::thread thread_;
};

}  // namespace tpuemu::service
