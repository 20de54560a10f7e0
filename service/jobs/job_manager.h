// JobManager: jobs submitted to TPU VM nodes — queue, run on the engine, persist, report.
//
// The pieces, one concept each; the manager owns the API below, each queued or running job's
// in-memory half (ActiveJob, active_job.h) and the pool tasks, and ties them:
//   JobQueues (job_queues.h)     which job each node starts next: priority then submission order,
//                                host-memory admission, maintenance holds, replica blocks;
//   the run (job_runner.cpp)     one job on a pool task: claim, timeout, compile, steps, result,
//                                retry, and the node's next start once it ends;
//   the replicas (job_replicas.cpp)  recovery, adoption and the other replicas' change feed;
//   JobWaiters (job_waiters.h)   who is told when a job changes;
//   JobRecords (job_records.h)   every write: one transaction per change, with its log line.
// Life cycle (job_state.h): QUEUED -> RUNNING -> SUCCEEDED | FAILED | CANCELLED | TIMED_OUT; a
// terminal job carries its exit code and reason, and is written as terminal in one transaction
// with its result, so nothing reads SUCCEEDED before the result is stored.
// Decoded once: Submit takes the spec typed (a JobSubmission; api/job_codec.h decodes the request,
// a program's graph is built there), checks it against the node and hands it to the job's run
// through its ActiveJob; a job queued before a restart is decoded once by Recover from its stored
// canonical JSON (ParseJobSpec, job_spec.h). Reads render the stored text.
// Scheduling: a node runs one job at a time (JobQueues); different nodes run concurrently on the
// shared engine::Pool (each running job occupies one pool task and splits its matmuls over the
// pool under its own fairness group).
// Host memory (host_memory_budget.h): when limits set one, Submit compiles the job's graph (no
// values generated; an hlo job: the evaluator's sweep over its module, engine/hlo/host_memory.h)
// to plan its peak host bytes (that compile served the job: its run reports it as its own,
// job_compile.h SubmitCompile) and rejects a job above max_job_host_memory_bytes
// (INVALID_ARGUMENT naming both figures); JobQueues admits the planned bytes against the
// daemon-wide budget, the job staying QUEUED with the reason in its log until they fit. Cancel
// works while it waits.
// Only a READY node accepts jobs (FAILED_PRECONDITION otherwise); a node turning STOPPING or
// DELETING cancels its jobs (OnNodeStateChanged, to be hooked to NodeManager's observer).
// Faults (docs/faults.md): host maintenance (InterruptNodeJobs) holds the node — it starts no job
// until ResumeNode — and interrupts its running job; a job with retries left (attempt <=
// maxRetries, like a Kubernetes Job's backoffLimit) goes back to QUEUED with attempt + 1 and runs
// again once the node can, the others end FAILED. A node that can never run again (PREEMPTED,
// deleted) ends its jobs whatever their retries (EndNodeJobs), saying so in the reason.
// Idempotency: a requestId with the same spec returns the existing job; with another spec,
// ALREADY_EXISTS. Recovery: Recover() re-queues RUNNING jobs (attempt + 1) and restarts the queues.
// Threads: every public method may be called from any thread. The ActiveJobs, the task count
// and JobQueues are guarded by mu_; JobWaiters' and the budget's locks are leaves taken inside it;
// the store, pool, cache, node manager and scheduler are borrowed and must outlive the manager;
// Shutdown() (or the destructor) interrupts running jobs and waits for their tasks; each
// interrupted job is written back to QUEUED so the next start runs it.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "db/store.h"
#include "engine/compile_cache.h"
#include "engine/pool.h"
#include "service/common/scheduler.h"
#include "service/jobs/active_job.h"
#include "service/jobs/job.h"
#include "service/jobs/job_compile.h"
#include "service/jobs/job_outcome.h"
#include "service/jobs/job_queues.h"
#include "service/jobs/job_records.h"
#include "service/jobs/job_spec.h"
#include "service/jobs/job_state.h"
#include "service/jobs/job_submission.h"
#include "service/jobs/job_waiters.h"
#include "service/nodes/node.h"
#include "service/nodes/node_manager.h"

namespace tpuemu::service {

struct JobPage {
  std::vector<Job> jobs;
  std::string next_page_token;
};

struct JobListRequest {
  std::string project;
  std::string zone;                           // "-" = all zones
  std::string node_id;                        // empty = all nodes
  std::optional<JobState> state;              // nullopt = any
  bool unknown_state = false;                 // the client named no JobState: no job matches
  std::map<std::string, std::string> labels;  // every pair must match
  PageRequest page;
};

// OK when a job planned at `host_bytes` may run under `limits` (host memory); else
// INVALID_ARGUMENT naming both figures and the flag that sets the limit (job_admission.cpp).
Status CheckJobHostBytes(int64_t host_bytes, const JobLimits& limits);

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
  // This process among the replicas sharing the store (jobs.owner), and whether others share it
  // (PostgreSQL). Set before Recover().
  void SetReplica(std::string id, bool shared_store) {
    records_.SetReplicaId(std::move(id));
    shared_ = shared_store;
  }
  // Adopt(true): re-queues the jobs a previous process under this replica id left RUNNING, takes
  // those no live replica owns, and starts every node's queue.
  Status Recover();
  // Makes this replica the owner of the QUEUED and RUNNING jobs no live replica owns (a replica
  // died or left; `include_own`: a restart): RUNNING ones are QUEUED again with attempt + 1, as
  // after a restart, and all join this replica's queues.
  Status Adopt(bool include_own);
  // Another replica changed job `name` (the change feed, "name state owner"): a job this replica
  // queues or runs that ended or moved elsewhere stops here; waiters for a job that ended wake;
  // its node's queue is tried again (it may be free now).
  void OnRemoteChange(const std::string& name, const std::string& state, const std::string& owner);
  // Another replica changed node `node` (the change feed): its jobs here react as to this
  // replica's own changes (stopping, deleting, preempted; maintenance holds and releases).
  void OnRemoteNodeChange(const Node& node);
  // Tries again every node whose next job another replica held back (safety net of the feed;
  // the replica heartbeat calls it).
  void RetryBlocked();
  // The node's checks (READY, cores, an hlo job's devices, host memory), then the job stored
  // QUEUED and queued. *created tells a new job from an idempotent replay.
  Result<Job> Submit(JobSubmission submission, bool* created = nullptr);
  // The limits a submission's spec is decoded under (api/job_codec.h) and the runs obey.
  const JobLimits& limits() const { return limits_; }
  Result<Job> Get(const std::string& name) const;
  Result<JobPage> List(const JobListRequest& request) const;
  // Writes the job CANCELLED (exit code 130, its event and log line) in this call's own
  // transaction and returns it as stored, whatever the engine is doing: a queued job leaves its
  // queue, a running one stops at its next op boundary (its run writes nothing more). A job
  // another replica queues or runs is ended the same way; that replica stops it through the
  // change feed. Idempotent: a terminal job is returned as is.
  Result<Job> Cancel(const std::string& name);
  // FAILED_PRECONDITION unless the job is terminal.
  Status Delete(const std::string& name);
  Result<std::vector<std::string>> Logs(const std::string& name, int64_t offset) const;
  // {"job", "state", "steps": [...], "summary": {...}, "ops": [...] (one step's per-op profile)}.
  Result<nlohmann::json> Metrics(const std::string& name) const;
  // Calls `fn` once with the job when it is terminal: now (on this thread) if it already is or
  // cannot be found (then with the error), else later on the thread that finishes it.
  void OnTerminal(const std::string& name, std::function<void(Result<Job>)> fn);
  // Cancels the node's jobs when it turns STOPPING or DELETING; fails them when it is
  // PREEMPTED (reason "node N was preempted"); a job with retries left is told it cannot use
  // them there.
  void OnNodeStateChanged(const Node& node, NodeState previous);
  // Ends every queued and running job of node `node_name` (its full name) in `state` (CANCELLED
  // or FAILED) with `reason`: the node went away under them for good (preemption, deletion) or
  // was stopped. A job that had retries left gets "; <no_retry>" appended when `no_retry` is not
  // empty. Every one is terminal in the store when this returns; a running one stops at its
  // kernels' next cancellation point.
  void EndNodeJobs(const std::string& node_name, JobState state, const std::string& reason,
                   const std::string& no_retry = "");
  // Host maintenance started on node `node_name`: it starts no job until ResumeNode. Its running
  // job with retries left is re-queued (attempt + 1, a log line naming `reason` and the retry),
  // without, it ends FAILED with `reason`; a queued job with retries left keeps its place (with a
  // log line), one without ends FAILED.
  void InterruptNodeJobs(const std::string& node_name, const std::string& reason);
  // The node can run jobs again (its maintenance ended): it starts its next job.
  void ResumeNode(const std::string& node_name);
  // Raises every queued and running job's interrupt flag and stops starting jobs, without
  // waiting (the first half of Shutdown: App::Stop calls it before draining HTTP).
  void Interrupt();
  // Interrupts running jobs, waits for them, forgets every queue (POST /_emulator/reset,
  // shutdown). An interrupted job goes back to QUEUED in the store and re-runs after a restart.
  void Shutdown();
  // Bytes the running jobs reserve of the host-memory budget (0 when there is no budget).
  int64_t ReservedHostBytes() const { return queues_.reserved_host_bytes(); }

  // Called after each committed job state change — QUEUED (submit: previous nullopt, or a
  // re-queue after a restart), RUNNING, terminal — with the job as stored, on the thread that
  // made it. Observers (events, utilization, metrics) must be quick and must not call back into
  // the manager.
  using TransitionObserver = JobWaiters::TransitionObserver;
  void AddTransitionObserver(TransitionObserver observer);

 private:
  // A job CancelLocked ended: its terminal write, made by FinishEnded on the caller's thread once
  // mu_ is released and before the caller returns, so the reply to a cancel, a stop or a delete
  // (and a kill -9 right after it) finds the job ended in the store.
  struct PendingEnd {
    std::string name;
    std::string node;
    JobOutcome outcome;
    bool running = false;   // its run stops at its next op boundary and writes nothing more
    bool was_next = false;  // a queued job that was its node's next (the node may start another)
  };

  // Queueing (job_manager.cpp; PlanHostBytes in job_admission.cpp).
  // The planned peak host bytes of `spec` on `node` (0 when no host-memory limit is set, for an
  // estimate-only hlo job, or when the graph does not compile: the run then reports that error).
  // A compile it made (a miss) is left in *compile: the job's run reports it as its own.
  int64_t PlanHostBytes(const JobSpec& spec, const Node& node,
                        std::optional<SubmitCompile>* compile);
  // Queues `job` on `node` with its in-memory half, which replaces the one it had (a retry).
  void EnqueueLocked(const std::string& node, const Job& job, std::shared_ptr<ActiveJob> active);
  // Starts the job JobQueues picks for `node` (if any) on a pool task.
  void PumpLocked(const std::string& node);
  // Pumps the nodes whose next job waits for host memory, oldest job first.
  void PumpMemoryWaitersLocked();
  // Writes the lines JobQueues' outbox holds; called without mu_ held by every path that pumps
  // (the writes stay out of mu_, and happen before that path returns).
  void FlushLines();
  // Requests the end of queued or running job `name` in `state` with `reason`, and appends it to
  // *ended (it counts as a task Shutdown waits for until FinishEnded wrote it). A queued job
  // leaves its queue here.
  void CancelLocked(const std::string& name, const std::string& reason, JobState state,
                    std::vector<PendingEnd>* ended);
  // Writes the terminal state of each job in `ended` (one transaction), then lets the nodes of
  // the queued ones start their next jobs. Called without mu_ held. Returns the store's error
  // when the write failed.
  Status FinishEnded(const std::vector<PendingEnd>& ended);

  // The run (job_runner.cpp).
  void Run(const std::string& node, const std::string& name);
  // Arms the job's timer (EffectiveTimeout) for `start_unix_ms` (its startTime) + the limit; it
  // requests TIMED_OUT if the job still runs then. Returns that moment for the executor (nullopt
  // when there is no limit).
  std::optional<RunDeadline> ArmTimeout(const std::shared_ptr<ActiveJob>& active,
                                        int64_t job_timeout_seconds, int64_t start_unix_ms);
  // The outcome of a run that stopped with `failure` (OutcomeAfterFailure, under mu_).
  JobOutcome AfterFailure(const ActiveJob& active, JobOutcome failure);
  // Whether the run stopped only because of Shutdown (InterruptedByShutdown, under mu_).
  bool Interrupted(const ActiveJob& active);
  // The run of `name` stopped for a fault it may be retried after: QUEUED again (attempt + 1) in
  // the store and in the node's queue (ActiveJob::Requeued); ends it instead if that write fails
  // or a cancel came.
  void Retry(const std::string& node, const std::string& name, const ActiveJob& active);
  // Writes the terminal state (if the job is not already terminal) and wakes the waiters.
  void Finish(const std::string& name, const JobOutcome& outcome, const nlohmann::json& result);
  // Marks the node free, starts its next job; the last thing a run's task does.
  void Release(const std::string& node);
  // The claim of `job` found the node busy elsewhere: back in its queue, the node blocked, the
  // task done (the last thing that run's task does).
  void Unclaimed(const std::string& node, const Job& job);

  // Jobs that end or run elsewhere (job_replicas.cpp).
  // The job is no longer this replica's (ended or re-owned through another replica): forgets its
  // ActiveJob; its waiters wake if it is terminal, else stay for the change feed.
  void Forget(const std::string& name);
  // Wakes the waiters of `name` if it is terminal as stored.
  void WakeIfTerminal(const std::string& name);

  NodeManager& nodes_;
  Scheduler& scheduler_;
  engine::Pool& pool_;
  engine::CompileCache& cache_;
  const JobLimits limits_;
  JobRecords records_;

  mutable std::mutex mu_;
  std::condition_variable idle_;                              // notified when running_tasks_ drops
  JobQueues queues_;                                          // guarded by mu_
  std::map<std::string, std::shared_ptr<ActiveJob>> active_;  // queued or running; guarded by mu_
  int running_tasks_ = 0;                                     // guarded by mu_
  bool shared_ = false;  // other replicas share the store; set before Recover()
  std::atomic<uint64_t> next_id_{0};
  // OnTerminal's callbacks and the transition observers; its locks are leaves, taken inside mu_.
  JobWaiters waiters_;
};

}  // namespace tpuemu::service
