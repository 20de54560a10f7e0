// engine::Pool: the worker threads every program runs on.
//
// Fairness: each task is submitted under a group key (a job id, a node name); every group has its
// own FIFO and workers take groups round-robin, one task per turn, so a program that queues a
// thousand shards cannot starve one that queues two.
// ParallelFor(group, n, fn) runs fn(0..n-1) on the pool and returns when all n are done. The
// calling thread runs shards itself while it waits, so calling it from a pool worker (a program's
// task splitting a big dot) cannot deadlock even when every worker is busy.
// GEMM threading: Matmul (engine/kernels/gemm.h) is single-threaded per call, so the pool is the
// only source of parallelism and size = hardware threads does not oversubscribe the CPU. Idle
// threads (workers out of tasks, a ParallelFor caller waiting for its helpers) poll for 100 us
// before they sleep: a wake-up on a virtual machine takes as long as a small op. Shutdown: the
// destructor stops accepting work, lets the workers finish every task already queued, then joins
// them. Submit after that returns FAILED_PRECONDITION. Tasks must not throw (an escaping exception
// terminates the process, as in std::thread). Thread-safe: every member function may be called from
// any thread; state is guarded by mu_.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "base/status.h"

namespace tpuemu::engine {

class Pool {
 public:
  struct Stats {
    int threads = 0;
    int busy_workers = 0;         // workers running a task right now
    int64_t queued_tasks = 0;     // submitted, not started
    int64_t completed_tasks = 0;  // cumulative
    bool shutting_down = false;
  };

  // threads < 1 (e.g. hardware_concurrency() unknown) means 1.
  explicit Pool(int threads = static_cast<int>(std::thread::hardware_concurrency()));
  ~Pool();  // Shutdown()
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;

  // Stops accepting work, lets the workers finish every queued task, joins them. Idempotent; must
  // not be called from a pool task.
  void Shutdown();
  // FAILED_PRECONDITION once shutdown began.
  Status Submit(const std::string& group, std::function<void()> task);
  // Runs fn(i) for i in [0, n) on up to threads()+1 threads (the caller included), or on at most
  // max_threads of them when max_threads > 0 (a job's share of the machine); returns after all
  // calls returned. fn must be safe to call concurrently.
  void ParallelFor(const std::string& group, int64_t n, const std::function<void(int64_t)>& fn,
                   int max_threads = 0);

  int threads() const { return static_cast<int>(workers_.size()); }
  Stats GetStats() const;

 private:
  void WorkerLoop();

  mutable std::mutex mu_;
  std::condition_variable cv_;  // signalled on new work and on shutdown
  std::unordered_map<std::string, std::deque<std::function<void()>>> queues_;  // guarded by mu_
  std::deque<std::string> ready_groups_;  // groups with queued tasks, round-robin; guarded by mu_
  bool stopping_ = false;                 // guarded by mu_
  int busy_ = 0;                          // guarded by mu_
  int64_t queued_ = 0;                    // guarded by mu_
  std::atomic<int64_t> pending_{0};       // queued_, written under mu_, read by idle workers' spin
  int64_t completed_ = 0;                 // guarded by mu_
  std::vector<std::thread> workers_;      // written only by the constructor
  std::once_flag joined_;
};

}  // namespace tpuemu::engine
