#include "service/jobs/job_waiters.h"

#include <utility>

namespace tpuemu::service {

void JobWaiters::Add(const std::string& name, Callback fn) {
  std::lock_guard lock(mu_);
  waiters_[name].push_back(std::move(fn));
}

bool JobWaiters::Has(const std::string& name) const {
  std::lock_guard lock(mu_);
  return waiters_.count(name) > 0;
}

std::vector<JobWaiters::Callback> JobWaiters::Take(const std::string& name) {
  std::lock_guard lock(mu_);
  auto it = waiters_.find(name);
  if (it == waiters_.end()) return {};
  std::vector<Callback> out = std::move(it->second);
  waiters_.erase(it);
  return out;
}

void JobWaiters::AddObserver(TransitionObserver observer) {
  std::lock_guard lock(observers_mu_);
  if (observer) observers_.push_back(std::move(observer));
}

void JobWaiters::Notify(const Job& job, std::optional<JobState> previous) {
  std::lock_guard lock(observers_mu_);
  for (const TransitionObserver& observer : observers_) observer(job, previous);
}

}  // namespace tpuemu::service
