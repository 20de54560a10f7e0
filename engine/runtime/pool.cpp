#include "engine/runtime/pool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace tpuemu::engine {
namespace {

// How long a thread that runs out of work polls before it sleeps. Waking a sleeping thread takes
// 50-300 us on a virtual machine (the idle vCPU halts, the wake is an IPI through the host), as
// long as a whole small op; a step's ops hand out work every few hundred microseconds, so a
// short spin keeps both sides awake between them and costs an idle pool 0.1 ms of CPU per task.
constexpr auto kSpin = std::chrono::microseconds(100);

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

// Polls `ready` for up to kSpin; true as soon as it holds.
template <typename Ready>
bool SpinUntil(const Ready& ready) {
  const auto until = std::chrono::steady_clock::now() + kSpin;
  for (int i = 0;; ++i) {
    if (ready()) return true;
    CpuRelax();
    if ((i & 63) == 63 && std::chrono::steady_clock::now() >= until) return ready();
  }
}

}  // namespace

Pool::Pool(int threads) {
  const int n = std::max(threads, 1);
  workers_.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) workers_.emplace_back([this] { WorkerLoop(); });
}

Pool::~Pool() { Shutdown(); }

void Pool::Shutdown() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  std::call_once(joined_, [this] {
    for (auto& w : workers_) w.join();
  });
}

Status Pool::Submit(const std::string& group, std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return Status::FailedPrecondition("engine pool is shutting down");
    auto& q = queues_[group];
    if (q.empty()) ready_groups_.push_back(group);
    q.push_back(std::move(task));
    ++queued_;
    pending_.store(queued_, std::memory_order_release);
  }
  cv_.notify_one();
  return Status::Ok();
}

void Pool::WorkerLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    if (!stopping_ && ready_groups_.empty()) {
      lock.unlock();
      SpinUntil([this] { return pending_.load(std::memory_order_acquire) > 0; });
      lock.lock();
    }
    cv_.wait(lock, [this] { return stopping_ || !ready_groups_.empty(); });
    if (ready_groups_.empty()) return;  // stopping and drained
    // Round-robin: take one task from the front group, then send the group to the back.
    std::string group = std::move(ready_groups_.front());
    ready_groups_.pop_front();
    auto it = queues_.find(group);
    std::function<void()> task = std::move(it->second.front());
    it->second.pop_front();
    if (it->second.empty()) {
      queues_.erase(it);
    } else {
      ready_groups_.push_back(std::move(group));
    }
    --queued_;
    pending_.store(queued_, std::memory_order_release);
    ++busy_;
    lock.unlock();
    task();
    task = nullptr;  // captures die before the task counts as completed
    lock.lock();
    --busy_;
    ++completed_;
  }
}

namespace {

// Shared by the caller of ParallelFor and its helper tasks; helpers may outlive the call (they
// can still be queued when all shards are done), hence the shared_ptr.
struct ParallelState {
  std::atomic<int64_t> next{0};
  int64_t n = 0;
  const std::function<void(int64_t)>* fn = nullptr;  // valid while done < n
  std::mutex mu;
  std::condition_variable cv;
  std::atomic<int64_t> done{0};  // written under mu (the waiter sleeps on cv), read spinning

  void RunShards() {
    int64_t finished = 0;
    for (int64_t i = next.fetch_add(1); i < n; i = next.fetch_add(1)) {
      (*fn)(i);
      ++finished;
    }
    if (finished == 0) return;
    std::lock_guard<std::mutex> lock(mu);
    if (done.fetch_add(finished, std::memory_order_acq_rel) + finished == n) cv.notify_all();
  }
};

}  // namespace

void Pool::ParallelFor(const std::string& group, int64_t n, const std::function<void(int64_t)>& fn,
                       int max_threads) {
  if (n <= 0) return;
  if (n == 1) {
    fn(0);
    return;
  }
  auto state = std::make_shared<ParallelState>();
  state->n = n;
  state->fn = &fn;
  int64_t helpers = std::min<int64_t>(n - 1, threads());
  if (max_threads > 0) helpers = std::min<int64_t>(helpers, max_threads - 1);
  for (int64_t h = 0; h < helpers; ++h) {
    if (!Submit(group, [state] { state->RunShards(); }).ok()) break;  // caller does the rest
  }
  state->RunShards();
  // The helpers' shards usually end a few microseconds after the caller's: poll before sleeping.
  if (SpinUntil([&] { return state->done.load(std::memory_order_acquire) == n; })) return;
  std::unique_lock<std::mutex> lock(state->mu);
  state->cv.wait(lock, [&] { return state->done.load(std::memory_order_acquire) == n; });
}

Pool::Stats Pool::GetStats() const {
  std::lock_guard<std::mutex> lock(mu_);
  Stats s;
  s.threads = static_cast<int>(workers_.size());
  s.busy_workers = busy_;
  s.queued_tasks = queued_;
  s.completed_tasks = completed_;
  s.shutting_down = stopping_;
  return s;
}

}  // namespace tpuemu::engine
