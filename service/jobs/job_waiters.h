// JobWaiters: who is told when a job changes — the callbacks waiting for one job to end
// (JobManager::OnTerminal: `:wait` long-polls, tpuctl, tests) and the observers of every committed
// state change (events, utilization, metrics). Split from JobManager, which decides when a job
// ended; this class only keeps the lists and hands them out.
// Threads: thread-safe. Its two mutexes are leaves: JobManager takes waiters' while it holds its
// own mu_ (so "the job is still queued or running here" and "register its waiter" are one step),
// and nothing is called while either is held — Take hands the callbacks out, the caller runs them
// after releasing its locks; Notify runs the observers under observers_mu_ only (they must be
// quick and must not call back into the manager).
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "service/jobs/job.h"
#include "service/jobs/job_state.h"

namespace tpuemu::service {

class JobWaiters {
 public:
  using Callback = std::function<void(Result<Job>)>;
  using TransitionObserver = std::function<void(const Job& job, std::optional<JobState> previous)>;

  // Registers `fn` to be called once when job `name` ends (the caller decides when: Take).
  void Add(const std::string& name, Callback fn);
  bool Has(const std::string& name) const;
  // The callbacks waiting for `name`, removed from the list (empty when none).
  std::vector<Callback> Take(const std::string& name);

  void AddObserver(TransitionObserver observer);
  // Calls every observer with the job as stored and its previous state, on this thread.
  void Notify(const Job& job, std::optional<JobState> previous);

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::vector<Callback>> waiters_;  // job name -> callbacks; guarded by mu_
  std::mutex observers_mu_;
  std::vector<TransitionObserver> observers_;  // guarded by observers_mu_
};

}  // namespace tpuemu::service
