// JobManager: jobs submitted to TPU VM nodes — queue, run on the engine, persist, report.
//
// Life cycle: QUEUED -> RUNNING -> SUCCEEDED (exit 0) | FAILED (1) | CANCELLED (130) |
// TIMED_OUT (124); a terminal job carries its exit code and reason, and is written as terminal in
// one transaction with its result, so nothing reads "SUCCEEDED" before the result is stored.
// Scheduling: a node runs one job at a time; its queue is ordered by priority (higher first) then
// submission order. Different nodes run concurrently on the shared engine::Pool (each running job
// occupies one pool task and splits its matmuls over the pool under its own fairness group).
// Only a READY node accepts jobs (FAILED_PRECONDITION otherwise); a node turning STOPPING or
// DELETING cancels its jobs (OnNodeStateChanged, to be hooked to NodeManager's observer).
// Idempotency: a requestId with the same spec returns the existing job; with another spec,
// ALREADY_EXISTS. Recovery: Recover() re-queues RUNNING jobs (attempt + 1) and restarts the queues.
// Per step one transaction stores the job_steps row and the log line.
// Threads: every public method may be called from any thread. In-memory scheduling state is
// guarded by mu_; the store, pool, cache, node manager and scheduler are borrowed and must outlive
// the manager; Shutdown() (or the destructor) cancels running jobs and waits for their tasks.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "db/job_repository.h"
#include "db/store.h"
#include "engine/compile_cache.h"
#include "engine/pool.h"
#include "service/common/scheduler.h"
#include "service/jobs/job_spec.h"
#include "service/nodes/node.h"
#include "service/nodes/node_manager.h"

namespace tpuemu::service {

// Exit codes, shell-style (documented in the README).
inline constexpr int kExitSucceeded = 0;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitTimedOut = 124;
inline constexpr int kExitCancelled = 130;

bool IsTerminalJobState(std::string_view state);

struct JobPage {
  std::vector<db::JobRow> jobs;
  std::string next_page_token;
};

struct JobListRequest {
  std::string project;
  std::string zone;                           // "-" = all zones
  std::string node_id;                        // empty = all nodes
  std::string state;                          // empty = any
  std::map<std::string, std::string> labels;  // every pair must match
  PageRequest page;
};

// The public JSON of a job (name, state, exitCode, reason, spec, result, times, attempt).
nlohmann::json RenderJob(const db::JobRow& row);

class JobManager {
 public:
  JobManager(db::Store& store, NodeManager& nodes, Scheduler& scheduler, engine::Pool& pool,
             engine::CompileCache& cache, JobLimits limits = {});
  ~JobManager();  // Shutdown()
  JobManager(const JobManager&) = delete;
  JobManager& operator=(const JobManager&) = delete;

  // Re-queues jobs left RUNNING by a previous process and starts every node's queue.
  Status Recover();
  // `job_id` empty = generated. *created tells a new job from an idempotent replay.
  Result<db::JobRow> Submit(const NodeKey& node, const nlohmann::json& body,
                            const std::string& job_id, bool* created = nullptr);
  Result<db::JobRow> Get(const std::string& name) const;
  Result<JobPage> List(const JobListRequest& request) const;
  // Idempotent: a terminal job is returned as is.
  Result<db::JobRow> Cancel(const std::string& name);
  // FAILED_PRECONDITION unless the job is terminal.
  Status Delete(const std::string& name);
  Result<std::vector<std::string>> Logs(const std::string& name, int64_t offset) const;
  // {"job", "state", "steps": [...], "summary": {...}, "ops": [...] (one step's per-op profile)}.
  Result<nlohmann::json> Metrics(const std::string& name) const;
  // Calls `fn` once with the job when it is terminal: now (on this thread) if it already is or
  // cannot be found (then with the error), else later on the thread that finishes it.
  void OnTerminal(const std::string& name, std::function<void(Result<db::JobRow>)> fn);
  // Cancels the node's jobs when it turns STOPPING or DELETING.
  void OnNodeStateChanged(const Node& node, NodeState previous);
  // Cancels running jobs, waits for them, forgets every queue (POST /_emulator/reset, shutdown).
  void Shutdown();

  // Called after each committed job state change — QUEUED (submit: previous "", or a re-queue
  // after a restart), RUNNING, terminal — with the job as stored, on the thread that made it.
  // Observers (events, utilization, metrics) must be quick and must not call back into the manager.
  using TransitionObserver =
      std::function<void(const db::JobRow& job, const std::string& previous)>;
  void AddTransitionObserver(TransitionObserver observer);

 private:
  // A queued or running job's in-memory half. `cancel` is read by the executor between ops.
  // Lock order: mu_ before Active::mu.
  struct Active {
    std::atomic<bool> cancel{false};
    std::mutex mu;
    std::string cancel_state;   // guarded by mu: CANCELLED or TIMED_OUT once requested
    std::string cancel_reason;  // guarded by mu
  };
  struct NodeQueue {
    std::set<std::pair<std::pair<int64_t, int64_t>, std::string>> queued;  // (-prio, seq), name
    std::string running;
  };
  void EnqueueLocked(const std::string& node, const db::JobRow& row);
  void PumpLocked(const std::string& node);
  void Run(const std::string& name);
  // Writes the terminal state (if the job is not already terminal) and wakes the waiters.
  void Finish(const std::string& name, const std::string& state, int exit_code,
              const std::string& reason, const nlohmann::json& result);
  Status CancelLocked(const std::string& name, const std::string& reason);
  void NotifyTransition(const db::JobRow& job, const std::string& previous);

  db::Store& store_;
  NodeManager& nodes_;
  Scheduler& scheduler_;
  engine::Pool& pool_;
  engine::CompileCache& cache_;
  const JobLimits limits_;
  db::JobRepository jobs_;

  mutable std::mutex mu_;
  std::condition_variable idle_;                           // notified when running_tasks_ drops
  std::map<std::string, NodeQueue> queues_;                // node name -> queue; guarded by mu_
  std::map<std::string, std::shared_ptr<Active>> active_;  // queued or running; guarded by mu_
  std::map<std::string, std::vector<std::function<void(Result<db::JobRow>)>>>
      waiters_;            // guarded by mu_
  int running_tasks_ = 0;  // guarded by mu_
  bool stopping_ = false;  // guarded by mu_
  std::atomic<uint64_t> next_id_{0};
  std::mutex observers_mu_;
  std::vector<TransitionObserver> observers_;  // guarded by observers_mu_
};

}  // namespace tpuemu::service
