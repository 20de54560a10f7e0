// JobManager: jobs submitted to TPU VM nodes — queue, run on the engine, persist, report. The API
// below is the one door (api/, daemon/ and tests use it); behind it, one class per concern, which
// the manager builds and wires:
//   JobBoard (job_board.h)         the jobs queued or running here, under one lock: queue, start
//                                  on a pool task, end (written before the caller returns), forget
//   JobQueues (job_queues.h)       the board's decisions: which job each node starts next
//                                  (priority, then submission order), host-memory admission,
//                                  maintenance holds, replica blocks
//   job_admission.h                Submit's plan of a job's peak host bytes and its per-job limit
//   ActiveJob (active_job.h)       a queued or running job's in-memory half: cancel request, spec
//   JobRunner (job_runner.h)       one job on a pool task: claim, timeout, compile, steps, result,
//                                  a retry after a fault, then its node's next job
//   JobReplicas (job_replicas.h)   recovery, adoption and the other replicas' job changes
//   JobWaiters (job_waiters.h)     who is told when a job changes
//   JobRecords (job_records.h)     every write: one transaction per change, with its log line
// The manager itself (job_manager.cpp) checks and stores submissions, serves the reads, ends jobs
// on request and turns nodes' changes (stop, delete, preemption, maintenance) into job ends,
// holds and retries.
// Life cycle (job_state.h): QUEUED -> RUNNING -> SUCCEEDED | FAILED | CANCELLED | TIMED_OUT; a
// terminal job is written with its exit code, reason and result in one transaction, so nothing
// reads SUCCEEDED before the result is stored.
// Decoded once: Submit takes the spec typed (JobSubmission, api/job_codec.h) and hands it to the
// run through the job's ActiveJob; a job queued before a restart is decoded once by Recover from
// its stored canonical JSON (ParseJobSpec). Reads render the stored text.
// Threads: every public method may be called from any thread; the board's lock guards the queues
// and the ActiveJobs (job_board.h). The store, pool, cache, node manager and scheduler are
// borrowed and must outlive the manager.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "db/store.h"
#include "engine/frontend/compile_cache.h"
#include "engine/runtime/pool.h"
#include "service/common/scheduler.h"
#include "service/jobs/job.h"
#include "service/jobs/job_admission.h"  // CheckJobHostBytes: Submit's per-job limit
#include "service/jobs/job_board.h"
#include "service/jobs/job_list.h"
#include "service/jobs/job_records.h"
#include "service/jobs/job_replicas.h"
#include "service/jobs/job_runner.h"
#include "service/jobs/job_spec.h"
#include "service/jobs/job_state.h"
#include "service/jobs/job_submission.h"
#include "service/jobs/job_waiters.h"
#include "service/nodes/node.h"
#include "service/nodes/node_manager.h"

namespace tpuemu::service {

class JobManager {
 public:
  JobManager(db::Store& store, NodeManager& nodes, Scheduler& scheduler, engine::Pool& pool,
             engine::CompileCache& cache, JobLimits limits = {});
  ~JobManager();  // Shutdown()
  JobManager(const JobManager&) = delete;
  JobManager& operator=(const JobManager&) = delete;

  // Where every job state change writes its event, in the change's transaction (borrowed; null =
  // none). Set before Recover() and the first Submit().
  void SetEventSink(EventSink* sink) { records_.SetEventSink(sink); }
  // The nodes' group commit, which the jobs' writes share (JobRecords::SetWriteBatcher).
  void SetWriteBatcher(WriteBatcher* batcher) { records_.SetWriteBatcher(batcher); }

  // Jobs.
  // The node's checks (READY, else FAILED_PRECONDITION; cores, an hlo job's devices), the job's
  // planned peak host bytes (a compile of its graph, which the run then reports as its own;
  // INVALID_ARGUMENT above max_job_host_memory_bytes), then the job stored QUEUED and queued; it
  // stays QUEUED, its log saying why, until its bytes fit in the budget (JobQueues). A requestId
  // with the same spec returns the existing job, with another spec ALREADY_EXISTS; *created tells
  // a new job from such a replay.
  Result<Job> Submit(JobSubmission submission, bool* created = nullptr);
  // The limits a submission's spec is decoded under (api/job_codec.h) and the runs obey.
  const JobLimits& limits() const { return limits_; }
  Result<Job> Get(const std::string& name) const;
  Result<JobPage> List(const JobListRequest& request) const;
  // Writes the job CANCELLED (exit code 130, its event and log line) in this call's own
  // transaction and returns it as stored, whatever the engine is doing: a queued job leaves its
  // queue (even while it waits for memory), a running one stops at its next op boundary (its run
  // writes nothing more). A job another replica queues or runs is ended the same way; that
  // replica stops it through the change feed. Idempotent: a terminal job is returned as is.
  Result<Job> Cancel(const std::string& name);
  // FAILED_PRECONDITION unless the job is terminal.
  Status Delete(const std::string& name);
  Result<std::vector<std::string>> Logs(const std::string& name, int64_t offset) const;
  // {"job", "state", "steps": [...], "summary": {...}, "ops": [...] (one step's per-op profile)}.
  Result<nlohmann::json> Metrics(const std::string& name) const;
  // Calls `fn` once with the job when it is terminal: now (on this thread) if it already is or
  // cannot be found (then with the error), else later on the thread that finishes it.
  void OnTerminal(const std::string& name, std::function<void(Result<Job>)> fn);
  // Called after each committed job state change — QUEUED (submit: previous nullopt, or a
  // re-queue after a restart), RUNNING, terminal — with the job as stored, on the thread that
  // made it. Observers (events, utilization, metrics) must be quick and must not call back into
  // the manager.
  using TransitionObserver = JobWaiters::TransitionObserver;
  void AddTransitionObserver(TransitionObserver observer);
  // Bytes the running jobs reserve of the host-memory budget (0 when there is no budget).
  int64_t ReservedHostBytes() const { return board_.reserved_host_bytes(); }

  // Nodes and faults (docs/faults.md).
  // Cancels the node's jobs when it turns STOPPING or DELETING; fails them when it is
  // PREEMPTED (reason "node N was preempted"); a job with retries left is told it cannot use
  // them there. To be hooked to NodeManager's observer.
  void OnNodeStateChanged(const Node& node, NodeState previous);
  // Ends every queued and running job of node `node_name` (its full name) in `state` (CANCELLED
  // or FAILED) with `reason`: the node went away under them for good (preemption, deletion) or
  // was stopped. A job that had retries left gets "; <no_retry>" appended when `no_retry` is not
  // empty. Every one is terminal in the store when this returns; a running one stops at its
  // kernels' next cancellation point.
  void EndNodeJobs(const std::string& node_name, JobState state, const std::string& reason,
                   const std::string& no_retry = "");
  // Host maintenance started on node `node_name`: it starts no job until ResumeNode. Its running
  // job with retries left (attempt <= maxRetries, like a Kubernetes Job's backoffLimit) is
  // re-queued (attempt + 1, a log line naming `reason` and the retry), without, it ends FAILED
  // with `reason`; a queued job with retries left keeps its place (with a log line), one without
  // ends FAILED.
  void InterruptNodeJobs(const std::string& node_name, const std::string& reason);
  // The node can run jobs again (its maintenance ended): it starts its next job.
  void ResumeNode(const std::string& node_name);

  // Replicas (JobReplicas, job_replicas.h; docs/replicas.md).
  // This process among the replicas sharing the store (jobs.owner), and whether others share it
  // (PostgreSQL). Set before Recover().
  void SetReplica(std::string id, bool shared_store) {
    records_.SetReplicaId(std::move(id));
    replicas_.SetShared(shared_store);
  }
  // Adopt(true): re-queues the jobs a previous process under this replica id left RUNNING
  // (attempt + 1), takes those no live replica owns, and starts every node's queue.
  Status Recover() { return Adopt(/*include_own=*/true); }
  // Takes over the QUEUED and RUNNING jobs no live replica owns (JobReplicas::Adopt).
  Status Adopt(bool include_own) { return replicas_.Adopt(include_own); }
  // Another replica changed job `name` (the change feed, "name state owner";
  // JobReplicas::OnRemoteChange).
  void OnRemoteChange(const std::string& name, const std::string& state, const std::string& owner) {
    replicas_.OnRemoteChange(name, state, owner);
  }
  // Another replica changed node `node` (the change feed): its jobs here react as to this
  // replica's own changes (stopping, deleting, preempted; maintenance holds and releases).
  void OnRemoteNodeChange(const Node& node);
  // Tries again every node whose next job another replica held back (safety net of the feed;
  // the replica heartbeat calls it).
  void RetryBlocked() { replicas_.RetryBlocked(); }

  // Stopping.
  // Raises every queued and running job's interrupt flag and stops starting jobs, without
  // waiting (the first half of Shutdown: App::Stop calls it before draining HTTP).
  void Interrupt() { board_.Interrupt(); }
  // Interrupts running jobs, waits for them, forgets every queue (POST /_emulator/reset,
  // shutdown). An interrupted job goes back to QUEUED in the store and re-runs after a restart.
  void Shutdown() { board_.Shutdown(); }

 private:
  NodeManager& nodes_;
  engine::CompileCache& cache_;
  const JobLimits limits_;
  JobRecords records_;
  JobWaiters waiters_;  // OnTerminal's callbacks and the transition observers (leaf locks)
  JobBoard board_;      // the queues and ActiveJobs; starts runner_ on pool tasks
  JobParts parts_;      // what runner_ and replicas_ borrow (the members above, the daemon's)
  JobRunner runner_;
  JobReplicas replicas_;
  std::atomic<uint64_t> next_id_{0};
};

}  // namespace tpuemu::service
