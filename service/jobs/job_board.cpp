// JobBoard (job_board.h): the queueing and ending moves JobManager's parts share. The store
// writes and the waiters' callbacks run after the lock is released.
#include "service/jobs/job_board.h"

#include <utility>

namespace tpuemu::service {

std::shared_ptr<ActiveJob> JobBoard::Locked::Find(const std::string& name) const {
  auto it = board_.active_.find(name);
  return it == board_.active_.end() ? nullptr : it->second;
}

void JobBoard::Locked::Enqueue(const std::string& node, const Job& job,
                               std::shared_ptr<ActiveJob> active) {
  board_.queues_.Push(node, {job.name, job.priority, job.seq, active->host_bytes});
  board_.active_[job.name] = std::move(active);
}

void JobBoard::Locked::Pump(const std::string& node) {
  std::optional<std::string> name = board_.queues_.StartNext(node);
  if (!name) return;
  ++board_.tasks_;  // Shutdown waits for the task
  JobBoard& board = board_;
  Status s =
      board.pool_.Submit(node, [&board, node, name = *name] { board.start_run_(node, name); });
  if (!s.ok()) {
    --board_.tasks_;
    board_.queues_.EndRun(node);
  }
}

void JobBoard::Locked::PumpMemoryWaiters() {
  for (const std::string& node : board_.queues_.MemoryWaiters()) Pump(node);
}

void JobBoard::Locked::End(const std::string& name, const std::string& reason, JobState state,
                           std::vector<PendingEnd>* ended) {
  auto it = board_.active_.find(name);
  if (it == board_.active_.end()) return;  // terminal or unknown: nothing to do
  it->second->cancel.Request(state, reason);
  // Written terminal by the caller before it replies (FinishEnded), even while a queued job
  // waits for host memory or a running one is inside a large op: that run stops at its next op
  // boundary, finds the job ended and writes nothing more.
  std::optional<JobQueues::Place> place = board_.queues_.Withdraw(name);
  if (!place) return;
  ++board_.tasks_;  // Shutdown waits for the write
  ended->push_back({name, place->node, Ended(state, reason), place->running, place->next});
}

void JobBoard::FlushLines() {
  std::vector<std::pair<std::string, std::string>> lines;
  {
    std::lock_guard lock(mu_);
    lines = queues_.TakeLines();
  }
  for (const auto& [name, line] : lines) (void)records_.AppendLine(name, line);
}

Status JobBoard::FinishEnded(const std::vector<PendingEnd>& ended) {
  if (ended.empty()) return Status::Ok();
  // One transaction for all of them: a node's stop or delete ends its whole queue at once.
  std::vector<std::pair<std::string, JobOutcome>> ends;
  for (const PendingEnd& end : ended) ends.push_back({end.name, end.outcome});
  Result<std::vector<EndedJob>> stored = records_.MarkTerminal(ends);
  std::map<std::string, Result<Job>> finals;  // what each queued job's waiters are told
  if (stored.ok()) {
    for (const EndedJob& e : *stored) {
      if (e.previous) waiters_.Notify(e.job, e.previous);
      finals.emplace(e.job.name, e.job);
    }
  }
  for (const PendingEnd& end : ended) {
    if (!end.running && !finals.count(end.name)) {
      finals.emplace(end.name, stored.ok() ? records_.Get(end.name) : Result<Job>(stored.status()));
    }
  }
  std::vector<std::pair<JobWaiters::Callback, Result<Job>>> wake;
  {
    Locked board(*this);
    for (const PendingEnd& end : ended) {
      // A running job keeps its in-memory half (and its node here) until its run stopped.
      if (end.running) continue;
      board.Erase(end.name);
      for (auto& fn : waiters_.Take(end.name)) wake.push_back({std::move(fn), finals.at(end.name)});
    }
    // A job that waited for host memory no longer holds back its node or the younger waiters.
    for (const PendingEnd& end : ended) {
      if (end.was_next) board.Pump(end.node);
    }
    board.PumpMemoryWaiters();
  }
  for (auto& [fn, job] : wake) fn(std::move(job));
  FlushLines();
  TasksDone(static_cast<int>(ended.size()));
  return stored.status();
}

void JobBoard::Finish(const std::string& name, const JobOutcome& outcome,
                      const nlohmann::json& result, const db::JobStepRow* last_step) {
  std::optional<JobState> previous;  // set when this call made the job terminal
  Result<Job> final_job = records_.MarkTerminal(name, outcome, result, &previous,
                                                /*any_replica=*/false, last_step);
  Finished(name, std::move(final_job), previous);
}

void JobBoard::FinishAndRelease(const std::string& node, const std::string& name,
                                const JobOutcome& outcome, const nlohmann::json& result,
                                std::optional<db::JobStepRow> last_step) {
  // The pool task goes on to another node's job meanwhile: on two engine threads a tiny job's
  // run was mostly waits for its commits (bench_jobs, issue 44).
  records_.MarkTerminalLater(
      name, outcome, result, std::move(last_step),
      [this, node, name](Result<Job> final_job, std::optional<JobState> previous) {
        Finished(name, std::move(final_job), previous);
        Release(node);
      });
}

void JobBoard::Finished(const std::string& name, Result<Job> final_job,
                        std::optional<JobState> previous) {
  if (final_job.ok() && previous) waiters_.Notify(*final_job, previous);
  // Not terminal: another replica adopted it and runs it now; its waiters wait for that run.
  if (final_job.ok() && !IsTerminal(final_job->state)) return Forget(name);
  std::vector<JobWaiters::Callback> waiters;
  {
    Locked board(*this);
    board.Erase(name);
    waiters = waiters_.Take(name);
  }
  for (auto& fn : waiters) fn(final_job);
}

void JobBoard::Forget(const std::string& name) {
  {
    Locked board(*this);
    board.Erase(name);
  }
  WakeIfTerminal(name);
}

void JobBoard::WakeIfTerminal(const std::string& name) {
  {
    Locked board(*this);
    if (!waiters_.Has(name) || board.Has(name)) return;
  }
  Result<Job> job = records_.Get(name);
  if (job.ok() && !IsTerminal(job->state)) return;
  std::vector<JobWaiters::Callback> waiters;
  {
    Locked board(*this);
    if (board.Has(name)) return;  // queued here again: its run wakes them
    waiters = waiters_.Take(name);
  }
  for (auto& fn : waiters) fn(job);
}

void JobBoard::Release(const std::string& node) {
  {
    Locked board(*this);
    board.queues().EndRun(node);
    board.Pump(node);
    board.PumpMemoryWaiters();  // the memory this job held may let waiting jobs start
  }
  FlushLines();  // before the task count drops: Shutdown waits for these writes too
  TasksDone(1);
}

void JobBoard::Unclaimed(const std::string& node, const Job& job) {
  {
    Locked board(*this);
    board.queues().Unclaim(node, /*requeue=*/board.Has(job.name));
  }
  TasksDone(1);
}

void JobBoard::Interrupt() {
  std::lock_guard lock(mu_);
  queues_.Close();
  for (auto& [name, active] : active_) active->cancel.Interrupt();
}

void JobBoard::Shutdown() {
  Interrupt();
  std::unique_lock lock(mu_);
  idle_.wait(lock, [&] { return tasks_ == 0; });
  queues_.Clear();
  active_.clear();
}

void JobBoard::TasksDone(int count) {
  std::lock_guard lock(mu_);
  tasks_ -= count;
  if (tasks_ == 0) idle_.notify_all();
}

}  // namespace tpuemu::service
