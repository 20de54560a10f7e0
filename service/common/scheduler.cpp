#include "service/common/scheduler.h"

#include "service/common/clock.h"

namespace tpuemu::service {

Scheduler::Scheduler() : thread_([this] { Run(); }) {}

Scheduler::~Scheduler() { Stop(); }

void Scheduler::At(int64_t due_unix_ms, std::function<void()> fn) {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    queue_.emplace(due_unix_ms, std::move(fn));
  }
  cv_.notify_one();
}

void Scheduler::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    queue_.clear();
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Scheduler::Clear() {
  std::lock_guard lock(mu_);
  queue_.clear();
}

std::size_t Scheduler::pending() const {
  std::lock_guard lock(mu_);
  return queue_.size();
}

void Scheduler::Run() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    if (queue_.empty()) {
      cv_.wait(lock);
      continue;
    }
    int64_t now = NowUnixMs();
    auto first = queue_.begin();
    if (first->first > now) {
      cv_.wait_for(lock, std::chrono::milliseconds(first->first - now));
      continue;
    }
    std::function<void()> fn = std::move(first->second);
    queue_.erase(first);
    lock.unlock();
    fn();
    lock.lock();
  }
}

}  // namespace tpuemu::service
