// JobReplicas (job_replicas.h): adoption and the other replicas' job changes.
#include "service/jobs/job_replicas.h"

#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "service/jobs/active_job.h"
#include "service/jobs/job_admission.h"

namespace tpuemu::service {

using nlohmann::json;

Status JobReplicas::Adopt(bool include_own) {
  std::vector<JobState> previous;
  Result<std::vector<Job>> queued = p_.records.Adopt(include_own, &previous);
  if (!queued.ok()) return queued.status();
  for (size_t i = 0; i < queued->size(); ++i) {
    if (previous[i] == JobState::kRunning) p_.waiters.Notify((*queued)[i], JobState::kRunning);
  }
  // Each queued job's spec is decoded once, here, from the canonical JSON Submit stored.
  std::vector<Result<JobSpec>> specs;
  std::vector<int64_t> host_bytes;
  std::vector<std::optional<SubmitCompile>> compiles;
  std::set<std::string> under_maintenance;
  specs.reserve(queued->size());
  for (const Job& job : *queued) {
    specs.push_back(ParseJobSpec(json::parse(job.spec_json, nullptr, false), p_.limits));
    Result<Node> node = p_.nodes.Get(NodeKey{job.project, job.zone, job.node_id});
    compiles.emplace_back();
    host_bytes.push_back(
        specs.back().ok() && node.ok()
            ? PlanJobHostBytes(p_.cache, p_.limits, *specs.back(), *node, &compiles.back())
            : 0);
    // Its maintenance ends after this (the daemon recovers maintenance after the jobs): held.
    if (node.ok() && node->UnderMaintenance()) under_maintenance.insert(job.NodeName());
  }
  {
    JobBoard::Locked board(p_.board);
    for (const std::string& node : under_maintenance) board.queues().Hold(node);
    for (size_t i = 0; i < queued->size(); ++i) {
      const Job& job = (*queued)[i];
      if (board.Has(job.name)) continue;
      board.Enqueue(
          job.NodeName(), job,
          ActiveJob::Queued(job, std::move(specs[i]), host_bytes[i], std::move(compiles[i])));
    }
    for (const std::string& node : board.queues().Nodes()) board.Pump(node);
  }
  p_.board.FlushLines();
  return Status::Ok();
}

void JobReplicas::OnRemoteChange(const std::string& name, const std::string& state,
                                 const std::string& owner) {
  Result<JobState> parsed = ParseJobState(state);
  const bool terminal = parsed.ok() && IsTerminal(*parsed);
  if (!terminal && owner == p_.records.replica_id()) return;  // this replica's own change
  const std::string node = name.substr(0, name.find("/jobs/"));
  {
    JobBoard::Locked board(p_.board);
    if (std::shared_ptr<ActiveJob> active = board.Find(name)) {
      std::optional<JobQueues::Place> place = board.queues().Withdraw(name);
      if (place && place->running) {
        // Its run stops at the next cancellation point; Finish then finds it ended (or not this
        // replica's) and writes nothing.
        active->cancel.Request(JobState::kCancelled, "ended through another replica");
      } else {
        board.Erase(name);
      }
    }
    // A job that started elsewhere frees nothing; one that ended or went back to the queue may
    // let this replica's next job on the node start.
    const bool started = parsed.ok() && *parsed == JobState::kRunning;
    if (!started) {
      board.queues().Unblock(node);
      board.Pump(node);
    }
  }
  p_.board.FlushLines();
  if (terminal) p_.board.WakeIfTerminal(name);
}

void JobReplicas::RetryBlocked() {
  {
    JobBoard::Locked board(p_.board);
    for (const std::string& node : board.queues().UnblockAll()) board.Pump(node);
  }
  p_.board.FlushLines();
}

}  // namespace tpuemu::service
