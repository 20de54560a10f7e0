// JobBoard: the jobs this replica queues or runs, in memory — JobQueues (who starts next), each
// job's ActiveJob, the count of pool tasks and end writes under way — and the moves every part of
// JobManager makes on them: queue a job, start what may start (a pool task running the StartRun
// body JobManager gives it), end a job (written before the caller returns), and forget a job that
// ended or runs elsewhere, waking its waiters (JobWaiters).
//
// Locking: one mutex guards the queues, the ActiveJobs and the task count. Everything that reads or
// changes them while it holds that mutex does so through a JobBoard::Locked, so holding it is
// visible in the types: nothing else can reach the queues. Writes to the store (JobRecords) and
// waiter callbacks run with the mutex released. The waiters' locks, the budget's and each
// CancelRequest's are leaves taken inside it, never the other way round.
// Borrows the records, the waiters and the pool (they must outlive the board); Shutdown waits
// for every task it started.
#pragma once

#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "engine/runtime/pool.h"
#include "service/jobs/active_job.h"
#include "service/jobs/job.h"
#include "service/jobs/job_outcome.h"
#include "service/jobs/job_queues.h"
#include "service/jobs/job_records.h"
#include "service/jobs/job_state.h"
#include "service/jobs/job_waiters.h"

namespace tpuemu::service {

class JobBoard {
 public:
  // A pool task's body: runs job `name` on `node` and ends with Release or Unclaimed.
  using StartRun = std::function<void(const std::string& node, const std::string& name)>;

  // A job Locked::End took off the board, for FinishEnded to write.
  struct PendingEnd {
    std::string name;
    std::string node;
    JobOutcome outcome;
    bool running = false;   // its run stops at its next op boundary and writes nothing more
    bool was_next = false;  // a queued job that was its node's next (the node may start another)
  };

  // budget_bytes: the daemon-wide host-memory budget (<= 0: none; JobQueues).
  JobBoard(JobRecords& records, JobWaiters& waiters, engine::Pool& pool, int64_t budget_bytes)
      : records_(records), waiters_(waiters), pool_(pool), queues_(budget_bytes) {}
  JobBoard(const JobBoard&) = delete;
  JobBoard& operator=(const JobBoard&) = delete;

  // What a started job runs (JobRunner::Run). Set once, before the first Locked::Pump.
  void SetStartRun(StartRun run) { start_run_ = std::move(run); }

  // The board under its mutex, for as long as this object lives (one scope).
  class Locked {
   public:
    explicit Locked(JobBoard& board) : board_(board), lock_(board.mu_) {}
    Locked(const Locked&) = delete;
    Locked& operator=(const Locked&) = delete;

    JobQueues& queues() { return board_.queues_; }
    // The job's ActiveJob while it is queued or running here, else null.
    std::shared_ptr<ActiveJob> Find(const std::string& name) const;
    bool Has(const std::string& name) const { return board_.active_.count(name) > 0; }
    // Queues `job` on `node` with its in-memory half, which replaces the one it had (a retry
    // re-queues a job whose run still holds the old one).
    void Enqueue(const std::string& node, const Job& job, std::shared_ptr<ActiveJob> active);
    // Drops the job's in-memory half (its queue place is the caller's to withdraw).
    void Erase(const std::string& name) { board_.active_.erase(name); }
    // Starts the job JobQueues picks for `node` (if any) on a pool task.
    void Pump(const std::string& node);
    // Pumps the nodes whose next job waits for host memory, oldest job first.
    void PumpMemoryWaiters();
    // Requests the end of queued or running job `name` in `state` with `reason` and appends it to
    // *ended, out of its queue; FinishEnded writes it. Nothing when the job is not here.
    void End(const std::string& name, const std::string& reason, JobState state,
             std::vector<PendingEnd>* ended);
    // Registers `fn` for the job's terminal state (JobWaiters::Add), atomically with the checks
    // made under this lock.
    void AddWaiter(const std::string& name, JobWaiters::Callback fn) {
      board_.waiters_.Add(name, std::move(fn));
    }

   private:
    JobBoard& board_;
    std::lock_guard<std::mutex> lock_;
  };

  // Writes the lines JobQueues' outbox holds. Every path that pumps calls it without the lock,
  // before it returns (the writes stay off the lock and off the pool tasks).
  void FlushLines();
  // Writes the terminal state of each job in `ended` in one transaction, on the caller's thread,
  // so the reply to a cancel, a stop or a delete (and a kill -9 right after it) finds the job
  // ended in the store; wakes the queued ones' waiters and lets their nodes start their next
  // jobs. Returns the store's error when the write failed.
  Status FinishEnded(const std::vector<PendingEnd>& ended);
  // A run's end: writes the terminal state (if the job is not terminal already) and wakes the
  // waiters; a job another replica adopted meanwhile is forgotten instead. `last_step`, if given,
  // is the run's last step row, written in the same commit (JobRecords::MarkTerminal).
  void Finish(const std::string& name, const JobOutcome& outcome, const nlohmann::json& result,
              const db::JobStepRow* last_step = nullptr);
  // Finish, then Release(node), without the calling pool task waiting for the end's commit: the
  // run's last act. The task is done (Shutdown waits for it) once the end committed and its
  // waiters woke, on the batcher's thread; the node's next claim queues behind the end's write.
  void FinishAndRelease(const std::string& node, const std::string& name, const JobOutcome& outcome,
                        const nlohmann::json& result, std::optional<db::JobStepRow> last_step);
  // The job is no longer this replica's (ended, or re-owned by another replica): forgets its
  // ActiveJob; its waiters wake if it is terminal, else stay for the change feed.
  void Forget(const std::string& name);
  // Wakes the waiters of `name` if it is terminal as stored and not queued here.
  void WakeIfTerminal(const std::string& name);
  // A run's task is done with `node`: the node is free, its next job and the memory waiters may
  // start. The last thing such a task does.
  void Release(const std::string& node);
  // The claim of `job` found `node` busy with another replica's job: the job back in its queue
  // (if still here), the node blocked, the task done. The last thing such a task does.
  void Unclaimed(const std::string& node, const Job& job);

  // Stopping: raises every queued and running job's interrupt flag and starts nothing more.
  void Interrupt();
  // Interrupt, then waits for every task and end write under way, and forgets every queue.
  void Shutdown();

  // Bytes the running jobs reserve of the host-memory budget (any thread; no lock).
  int64_t reserved_host_bytes() const { return queues_.reserved_host_bytes(); }

 private:
  void TasksDone(int count);  // `count` tasks or end writes finished (takes mu_)
  // Finish's part after the write: the waiters told, the job forgotten or erased.
  void Finished(const std::string& name, Result<Job> final_job, std::optional<JobState> previous);

  JobRecords& records_;
  JobWaiters& waiters_;
  engine::Pool& pool_;
  StartRun start_run_;

  std::mutex mu_;
  std::condition_variable idle_;                              // notified when tasks_ drops to 0
  JobQueues queues_;                                          // guarded by mu_
  std::map<std::string, std::shared_ptr<ActiveJob>> active_;  // queued or running; mu_
  int tasks_ = 0;  // pool tasks and FinishEnded writes under way (Shutdown waits for 0); mu_
};

}  // namespace tpuemu::service
