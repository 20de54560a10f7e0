// The replicas half of JobManager (see the header): adopting the jobs no live replica owns (a
// restart is adoption of this replica's own), the changes other replicas commit (the change feed:
// jobs ended, cancelled or adopted elsewhere, their nodes' changes) and the waiters of jobs that
// run elsewhere. The API and the queueing are job_manager.cpp's; the store's rules (claims,
// fencing) are JobRecords'.
#include <utility>

#include "service/jobs/job_manager.h"

namespace tpuemu::service {

using nlohmann::json;

Status JobManager::Recover() { return Adopt(/*include_own=*/true); }

Status JobManager::Adopt(bool include_own) {
  std::vector<JobState> previous;
  Result<std::vector<Job>> queued = records_.Adopt(include_own, &previous);
  if (!queued.ok()) return queued.status();
  for (size_t i = 0; i < queued->size(); ++i) {
    if (previous[i] == JobState::kRunning) waiters_.Notify((*queued)[i], JobState::kRunning);
  }
  // Each queued job's spec is decoded once, here, from the canonical JSON Submit stored.
  std::vector<Result<JobSpec>> specs;
  std::vector<int64_t> host_bytes;
  std::vector<std::optional<SubmitCompile>> compiles;
  std::set<std::string> under_maintenance;
  specs.reserve(queued->size());
  for (const Job& job : *queued) {
    specs.push_back(ParseJobSpec(json::parse(job.spec_json, nullptr, false), limits_));
    Result<Node> node = nodes_.Get(NodeKey{job.project, job.zone, job.node_id});
    compiles.emplace_back();
    host_bytes.push_back(
        specs.back().ok() && node.ok()
            ? PlanJobHostBytes(cache_, limits_, *specs.back(), *node, &compiles.back())
            : 0);
    // Its maintenance ends after this (the daemon recovers maintenance after the jobs): held.
    if (node.ok() && node->UnderMaintenance()) under_maintenance.insert(job.NodeName());
  }
  {
    std::lock_guard lock(mu_);
    for (const std::string& node : under_maintenance) queues_.Hold(node);
    for (size_t i = 0; i < queued->size(); ++i) {
      const Job& job = (*queued)[i];
      if (active_.count(job.name)) continue;
      EnqueueLocked(
          job.NodeName(), job,
          ActiveJob::Queued(job, std::move(specs[i]), host_bytes[i], std::move(compiles[i])));
    }
    for (const std::string& node : queues_.Nodes()) PumpLocked(node);
  }
  FlushLines();
  return Status::Ok();
}

// Wakes the waiters of `name` if it is terminal as stored.
void JobManager::WakeIfTerminal(const std::string& name) {
  {
    std::lock_guard lock(mu_);
    if (!waiters_.Has(name) || active_.count(name)) return;
  }
  Result<Job> job = Get(name);
  if (job.ok() && !IsTerminal(job->state)) return;
  std::vector<JobWaiters::Callback> waiters;
  {
    std::lock_guard lock(mu_);
    if (active_.count(name)) return;  // queued here again: its run wakes them
    waiters = waiters_.Take(name);
  }
  for (auto& fn : waiters) fn(job);
}

// The job is no longer this replica's (ended or re-owned through another replica): forgets its
// ActiveJob; its waiters wake if it is terminal, else stay for the change feed.
void JobManager::Forget(const std::string& name) {
  {
    std::lock_guard lock(mu_);
    active_.erase(name);
  }
  WakeIfTerminal(name);
}

void JobManager::OnRemoteChange(const std::string& name, const std::string& state,
                                const std::string& owner) {
  Result<JobState> parsed = ParseJobState(state);
  const bool terminal = parsed.ok() && IsTerminal(*parsed);
  if (!terminal && owner == records_.replica_id()) return;  // this replica's own change
  const std::string node = name.substr(0, name.find("/jobs/"));
  {
    std::lock_guard lock(mu_);
    auto it = active_.find(name);
    if (it != active_.end()) {
      std::optional<JobQueues::Place> place = queues_.Withdraw(name);
      if (place && place->running) {
        // Its run stops at the next cancellation point; Finish then finds it ended (or not this
        // replica's) and writes nothing.
        it->second->cancel.Request(JobState::kCancelled, "ended through another replica");
      } else {
        active_.erase(it);
      }
    }
    // A job that started elsewhere frees nothing; one that ended or went back to the queue may
    // let this replica's next job on the node start.
    const bool started = parsed.ok() && *parsed == JobState::kRunning;
    if (!started) {
      queues_.Unblock(node);
      PumpLocked(node);
    }
  }
  FlushLines();
  if (terminal) WakeIfTerminal(name);
}

void JobManager::RetryBlocked() {
  {
    std::lock_guard lock(mu_);
    for (const std::string& node : queues_.UnblockAll()) PumpLocked(node);
  }
  FlushLines();
}

void JobManager::OnRemoteNodeChange(const Node& node) {
  const std::string name = node.key.Name();
  OnNodeStateChanged(node, NodeState::kUnspecified);
  if (node.state != NodeState::kReady) return;
  bool held = false;
  {
    std::lock_guard lock(mu_);
    held = queues_.IsHeld(name);
  }
  if (node.UnderMaintenance() && !held) {
    InterruptNodeJobs(name, "interrupted by host maintenance on node " + node.key.node_id +
                                " until " + node.maintenance.value("until", std::string()));
  } else if (!node.UnderMaintenance() && held) {
    ResumeNode(name);
  }
}

}  // namespace tpuemu::service
