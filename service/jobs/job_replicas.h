// JobReplicas: this process among the replicas sharing the store (docs/replicas.md) — adopting
// the jobs no live replica owns (a restart is adoption of this replica's own) and the job changes
// other replicas commit (the change feed: jobs ended, cancelled, started or adopted elsewhere).
// A node's changes from the feed are JobManager's (OnRemoteNodeChange), as for its own nodes.
// The store's rules (claims, fencing) are JobRecords'; the queues are reached through JobBoard.
// Threads: any; the one setting (shared) is set before Adopt. Everything it holds is borrowed
// and must outlive it.
#pragma once

#include <string>

#include "base/status.h"
#include "service/jobs/job_parts.h"

namespace tpuemu::service {

class JobReplicas {
 public:
  explicit JobReplicas(JobParts parts) : p_(parts) {}

  // Whether other replicas share the store (PostgreSQL): a job not queued here may then run
  // elsewhere, and its waiters wait for the change feed. Set before Adopt.
  void SetShared(bool shared) { shared_ = shared; }
  bool shared() const { return shared_; }

  // Makes this replica the owner of the QUEUED and RUNNING jobs no live replica owns (a replica
  // died or left; `include_own`: a restart): RUNNING ones are QUEUED again with attempt + 1, as
  // after a restart; each spec is decoded and planned once, and all join this replica's queues
  // (a node under maintenance held), whose nodes then start.
  Status Adopt(bool include_own);
  // Another replica changed job `name` to `state`, owned by `owner`: a job this replica queues or
  // runs that ended or moved elsewhere stops here; waiters for a job that ended wake; its node's
  // queue is tried again (it may be free now).
  void OnRemoteChange(const std::string& name, const std::string& state, const std::string& owner);
  // Tries again every node whose next job another replica held back (the safety net of the feed).
  void RetryBlocked();

 private:
  JobParts p_;
  bool shared_ = false;
};

}  // namespace tpuemu::service
