// Scheduler: runs callbacks at a wall-clock time on one background thread.
//
// Node transitions (CREATING -> READY after the provisioning delay, …) are scheduled here; their
// due times are also persisted, so after a restart NodeManager::Recover schedules them again.
// Thread-safe. Callbacks run one at a time on the scheduler thread and must not block for long.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

namespace tpuemu::service {

class Scheduler {
 public:
  Scheduler();
  ~Scheduler();  // Stop()s
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Runs `fn` at or after `due_unix_ms` (now if in the past). Ignored after Stop().
  void At(int64_t due_unix_ms, std::function<void()> fn);
  // Waits for the running callback, drops the pending ones, joins the thread. Idempotent.
  void Stop();
  // Drops pending callbacks without stopping (for POST /_emulator/reset).
  void Clear();
  std::size_t pending() const;

 private:
  void Run();

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::multimap<int64_t, std::function<void()>> queue_;  // guarded by mu_
  bool stopping_ = false;                                // guarded by mu_
  std::thread thread_;
};

}  // namespace tpuemu::service
