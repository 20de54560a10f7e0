#include "service/jobs/job_records.h"

#include <map>
#include <utility>

#include "service/common/clock.h"
#include "service/common/write_batcher.h"
#include "service/jobs/job_event.h"
#include "service/jobs/job_log_lines.h"
#include "service/nodes/node_rows.h"

namespace tpuemu::service {
namespace {

Result<std::vector<Job>> JobsFromRows(Result<std::vector<db::JobRow>> rows) {
  if (!rows.ok()) return rows.status();
  std::vector<Job> jobs;
  jobs.reserve(rows->size());
  for (db::JobRow& row : *rows) {
    Result<Job> job = JobFromRow(std::move(row));
    if (!job.ok()) return job.status();
    jobs.push_back(std::move(job).value());
  }
  return jobs;
}

// A result as stored: its JSON text, nullopt for a null one (the stored result stays).
std::optional<std::string> ResultJson(const nlohmann::json& result) {
  if (result.is_null()) return std::nullopt;
  return result.dump();
}

Result<Job> JobOf(Result<db::JobRow> row) {
  if (!row.ok()) return row.status();
  return JobFromRow(std::move(row).value());
}

}  // namespace

Result<Job> JobRecords::Get(const std::string& name) const { return JobOf(jobs_.Get(name)); }

Status JobRecords::Write(const std::function<Status(db::Txn&)>& body) {
  // Shared commits: a tiny job is four writes (submit, claim, compile, its last step with its end;
  // the run waits for the claim alone: RecordCompileLater, MarkTerminalLater), and on a SQLite
  // file each commit of its own appended its pages to the WAL (bench_jobs, issue 44).
  if (batcher_ != nullptr) return batcher_->Run(body);
  return store_.Transaction(body);
}

Result<Job> JobRecords::Get(db::Txn& txn, const std::string& name) const {
  return JobOf(jobs_.Get(txn, name));
}

Result<std::vector<Job>> JobRecords::List(const db::JobFilter& filter, int64_t after_seq,
                                          int limit) const {
  return JobsFromRows(jobs_.List(filter, after_seq, limit));
}

Result<std::vector<Job>> JobRecords::ListInState(JobState state) const {
  return JobsFromRows(jobs_.ListInState(JobStateName(state)));
}

Result<std::vector<std::string>> JobRecords::Logs(const std::string& name, int64_t offset) const {
  return jobs_.Logs(name, offset);
}

Result<std::vector<db::JobStepRow>> JobRecords::Steps(const std::string& name) const {
  return jobs_.Steps(name);
}

Status JobRecords::Update(db::Txn& txn, const Job& job, const std::string& line) const {
  TPUEMU_RETURN_IF_ERROR(jobs_.Update(txn, JobToRow(job)));
  return jobs_.AppendLog(txn, job.name, line);
}

Result<Job> JobRecords::InsertOrReplay(Job job, bool* inserted) {
  *inserted = false;
  PendingEvents events(event_sink_);
  Status s = Write([&](db::Txn& txn) -> Status {
    if (job.request_id) {
      Result<db::JobRow> existing =
          jobs_.GetByRequestId(txn, job.project, job.zone, job.node_id, *job.request_id);
      if (existing.ok()) {
        if (existing->spec_hash != job.spec_hash) {
          return Status::AlreadyExists("requestId '" + *job.request_id + "' was used by job " +
                                       existing->name + " with a different spec");
        }
        Result<Job> replay = JobFromRow(std::move(existing).value());
        if (!replay.ok()) return replay.status();
        job = std::move(replay).value();
        return Status::Ok();
      }
      if (existing.status().code() != StatusCode::kNotFound) return existing.status();
    }
    job.owner = replica_id_;
    Result<int64_t> seq = jobs_.Insert(txn, JobToRow(job));
    if (!seq.ok()) return seq.status();
    job.seq = *seq;
    *inserted = true;
    TPUEMU_RETURN_IF_ERROR(events.Append(txn, JobEvent(job, std::nullopt)));
    return jobs_.AppendLog(txn, job.name, QueuedLine(job.NodeName()));
  });
  if (!s.ok()) {
    *inserted = false;
    return s;
  }
  events.Publish();
  return job;
}

Status JobRecords::AppendLine(const std::string& name, const std::string& line) {
  return Write([&](db::Txn& txn) { return jobs_.AppendLog(txn, name, line); });
}

Result<Job> JobRecords::RequeueInterrupted(const std::string& name, bool* requeued) {
  return RequeueRunning(
      name, [](const Job&) { return ShutdownRequeuedLine(); }, requeued);
}

Result<Job> JobRecords::RequeueAfterFault(const std::string& name, const std::string& fault,
                                          bool* requeued) {
  return RequeueRunning(
      name, [&](const Job& job) { return FaultRetryLine(fault, job.attempt, job.max_retries); },
      requeued);
}

Result<Job> JobRecords::RequeueRunning(const std::string& name,
                                       const std::function<std::string(const Job&)>& line_of,
                                       bool* requeued) {
  *requeued = false;
  Job job;
  PendingEvents events(event_sink_);
  Status s = Write([&](db::Txn& txn) -> Status {
    Result<Job> current = Get(txn, name);
    if (!current.ok()) return current.status();
    job = std::move(current).value();
    if (job.state != JobState::kRunning) return Status::Ok();
    job.state = JobState::kQueued;
    job.attempt += 1;
    job.start_time.reset();
    TPUEMU_RETURN_IF_ERROR(Update(txn, job, line_of(job)));
    TPUEMU_RETURN_IF_ERROR(events.Append(txn, JobEvent(job, JobState::kRunning)));
    *requeued = true;
    return Status::Ok();
  });
  if (!s.ok()) {
    *requeued = false;
    return s;
  }
  events.Publish();
  return job;
}

Result<Job> JobRecords::Claim(const std::string& name, ClaimResult* result) {
  *result = ClaimResult::kGone;
  Job job;
  PendingEvents events(event_sink_);
  Status s = Write([&](db::Txn& txn) -> Status {
    *result = ClaimResult::kGone;
    Result<db::JobRow> locked = jobs_.LockQueued(txn, name);
    if (!locked.ok()) {
      if (locked.status().code() != StatusCode::kNotFound) return locked.status();
      Result<Job> current = Get(txn, name);  // not QUEUED (or held by another claim)
      if (!current.ok()) return current.status();
      job = std::move(current).value();
      if (job.state == JobState::kQueued) *result = ClaimResult::kBusy;
      return Status::Ok();
    }
    Result<Job> current = JobFromRow(std::move(locked).value());
    if (!current.ok()) return current.status();
    job = std::move(current).value();
    if (job.owner && *job.owner != replica_id_) return Status::Ok();  // another replica's now
    *result = ClaimResult::kBusy;
    Result<std::optional<std::string>> running =
        jobs_.RunningOnNode(txn, job.project, job.zone, job.node_id);
    if (!running.ok()) return running.status();
    if (running->has_value()) return Status::Ok();
    Result<std::optional<std::string>> next =
        jobs_.NextQueuedOnNode(txn, job.project, job.zone, job.node_id);
    if (!next.ok()) return next.status();
    if (next->value_or(name) != name) return Status::Ok();
    Result<db::NodeRow> node = nodes_.Get(txn, job.NodeName());
    if (node.ok()) {
      Result<Node> parsed = NodeFromRow(*node);
      if (parsed.ok() && parsed->UnderMaintenance()) return Status::Ok();
    }
    job.state = JobState::kRunning;
    job.start_time = NowRfc3339();
    TPUEMU_RETURN_IF_ERROR(Update(txn, job, RunningLine(job.attempt)));
    TPUEMU_RETURN_IF_ERROR(events.Append(txn, JobEvent(job, JobState::kQueued)));
    *result = ClaimResult::kStarted;
    return Status::Ok();
  });
  if (!s.ok()) {
    *result = ClaimResult::kGone;
    // Another replica's claim on the same node won the race (the one-running index): wait.
    if (s.code() == StatusCode::kAlreadyExists) *result = ClaimResult::kBusy;
    return s;
  }
  events.Publish();
  return job;
}

Result<std::vector<Job>> JobRecords::Adopt(bool include_own, std::vector<JobState>* previous) {
  std::vector<Job> adopted;
  previous->clear();
  PendingEvents events(event_sink_);
  Status s = store_.Transaction([&](db::Txn& txn) -> Status {
    adopted.clear();
    previous->clear();
    std::map<std::string, std::string> dead_owner;  // job -> the replica it is taken from
    Result<std::vector<db::JobRow>> rows =
        jobs_.AdoptOrphans(txn, replica_id_, include_own, &dead_owner);
    if (!rows.ok()) return rows.status();
    for (db::JobRow& row : *rows) {
      Result<Job> job = JobFromRow(std::move(row));
      if (!job.ok()) return job.status();
      previous->push_back(job->state);
      // A job this replica left itself (include_own: its restart), or one taken from another.
      const auto taken = dead_owner.find(job->name);
      const bool running = job->state == JobState::kRunning;
      if (running) {
        job->state = JobState::kQueued;
        job->attempt += 1;
        job->start_time.reset();
      }
      if (taken != dead_owner.end()) {
        // Its log names the adoption and the replica it came from, not a restart.
        const std::string line = AdoptedLine(taken->second, running, job->attempt);
        if (running) {
          TPUEMU_RETURN_IF_ERROR(Update(txn, *job, line));
        } else {
          TPUEMU_RETURN_IF_ERROR(jobs_.AppendLog(txn, job->name, line));
        }
      } else if (running) {
        TPUEMU_RETURN_IF_ERROR(Update(txn, *job, RequeuedLine(job->attempt)));
      }
      if (running) TPUEMU_RETURN_IF_ERROR(events.Append(txn, JobEvent(*job, JobState::kRunning)));
      adopted.push_back(std::move(job).value());
    }
    return Status::Ok();
  });
  if (!s.ok()) return s;
  events.Publish();
  return adopted;
}

Status JobRecords::RecordCompile(const std::string& name, const CompiledJob& compiled) {
  return Write(CompileBody(name, compiled));
}

void JobRecords::RecordCompileLater(const std::string& name, const CompiledJob& compiled) {
  if (batcher_ == nullptr) {
    (void)store_.Transaction(CompileBody(name, compiled));
    return;
  }
  // Not waited for: the batcher's queue keeps it ahead of the run's later writes (its steps, its
  // end), which then usually share its commit; a failure only loses the early view, as above.
  batcher_->Submit(CompileBody(name, compiled), nullptr, nullptr);
}

std::function<Status(db::Txn&)> JobRecords::CompileBody(const std::string& name,
                                                        const CompiledJob& compiled) const {
  // Serialized here, on the run's thread, not on the batcher's, which every write waits for.
  return [this, name, record = compiled.record,
          result = nlohmann::json{{"profile", compiled.profile}}.dump(),
          line = compiled.log_line](db::Txn& txn) -> Status {
    TPUEMU_RETURN_IF_ERROR(programs_.Put(txn, record));
    Result<Job> job = Get(txn, name);
    if (!job.ok()) return job.status();
    job->result_json = result;
    return Update(txn, *job, line);
  };
}

Status JobRecords::RecordStep(const std::string& name, const db::JobStepRow& step) {
  return Write([&](db::Txn& txn) { return RecordStep(txn, name, step); });
}

Status JobRecords::RecordStep(db::Txn& txn, const std::string& name,
                              const db::JobStepRow& step) const {
  // Only the state and owner: a step must not read the job's spec (an HLO module) each time.
  Result<std::pair<std::string, std::optional<std::string>>> job = jobs_.StateAndOwner(txn, name);
  if (!job.ok()) return job.status();
  const auto& [state, owner] = *job;
  if (state != JobStateName(JobState::kRunning) || (owner && *owner != replica_id_)) {
    return Status::Aborted("job " + name + " is " + state +
                           (owner ? " on replica " + *owner : std::string()) +
                           "; this replica stops its run");
  }
  TPUEMU_RETURN_IF_ERROR(jobs_.AppendStep(txn, name, step));
  return jobs_.AppendLog(txn, name, StepLine(step));
}

Status JobRecords::MarkTerminal(db::Txn& txn, PendingEvents& events, const std::string& name,
                                const JobOutcome& outcome, const std::optional<std::string>& result,
                                bool any_replica, Job* job,
                                std::optional<JobState>* previous) const {
  previous->reset();
  Result<Job> current = Get(txn, name);
  if (!current.ok()) return current.status();
  *job = std::move(current).value();
  if (IsTerminal(job->state)) return Status::Ok();
  // Another replica queues or runs it (it adopted the job): that one ends it, not this stale run.
  const bool elsewhere = job->owner && *job->owner != replica_id_;
  if (elsewhere && !any_replica) return Status::Ok();
  const JobState left = job->state;
  job->state = outcome.state;
  job->exit_code = outcome.exit_code;
  job->reason = outcome.reason;
  job->end_time = NowRfc3339();
  if (result) job->result_json = *result;
  TPUEMU_RETURN_IF_ERROR(Update(txn, *job, TerminalLine(outcome)));
  TPUEMU_RETURN_IF_ERROR(events.Append(txn, JobEvent(*job, left)));
  *previous = left;
  return Status::Ok();
}

Result<Job> JobRecords::MarkTerminal(const std::string& name, const JobOutcome& outcome,
                                     const nlohmann::json& result,
                                     std::optional<JobState>* previous, bool any_replica,
                                     const db::JobStepRow* last_step) {
  Job job;
  PendingEvents events(event_sink_);
  Status s = Write([&](db::Txn& txn) -> Status {
    if (last_step != nullptr) {
      // Not RUNNING here any more (cancelled, adopted): the step is not written, as RecordStep
      // would refuse it, and the end below finds the job as it is.
      Status step = RecordStep(txn, name, *last_step);
      if (!step.ok() && step.code() != StatusCode::kAborted) return step;
    }
    return MarkTerminal(txn, events, name, outcome, ResultJson(result), any_replica, &job,
                        previous);
  });
  if (!s.ok()) {
    previous->reset();
    return s;
  }
  events.Publish();
  return job;
}

void JobRecords::MarkTerminalLater(const std::string& name, const JobOutcome& outcome,
                                   const nlohmann::json& result,
                                   std::optional<db::JobStepRow> last_step, Marked done) {
  if (batcher_ == nullptr) {
    std::optional<JobState> previous;
    Result<Job> job = MarkTerminal(name, outcome, result, &previous, /*any_replica=*/false,
                                   last_step ? &*last_step : nullptr);
    return done(std::move(job), previous);
  }
  // What the body leaves for the acknowledgement, shared by the three callbacks.
  struct Pending {
    explicit Pending(EventSink* sink) : events(sink) {}
    Job job;
    std::optional<JobState> previous;
    PendingEvents events;
  };
  auto pending = std::make_shared<Pending>(event_sink_);
  batcher_->Submit(
      [this, pending, name, outcome, result = ResultJson(result),
       last_step = std::move(last_step)](db::Txn& txn) -> Status {
        pending->previous.reset();
        if (last_step) {
          Status step = RecordStep(txn, name, *last_step);  // as MarkTerminal above
          if (!step.ok() && step.code() != StatusCode::kAborted) return step;
        }
        return MarkTerminal(txn, pending->events, name, outcome, result, /*any_replica=*/false,
                            &pending->job, &pending->previous);
      },
      // Published on commit, in commit order.
      [pending] { pending->events.Publish(); },
      [pending, done = std::move(done)](Status s) {
        if (!s.ok()) return done(s, std::nullopt);
        done(std::move(pending->job), pending->previous);
      });
}

Result<std::vector<EndedJob>> JobRecords::MarkTerminal(
    const std::vector<std::pair<std::string, JobOutcome>>& ends) {
  std::vector<EndedJob> ended;
  PendingEvents events(event_sink_);
  Status s = store_.Transaction([&](db::Txn& txn) -> Status {
    ended.clear();
    for (const auto& [name, outcome] : ends) {
      EndedJob e;
      Status one = MarkTerminal(txn, events, name, outcome, std::nullopt,
                                /*any_replica=*/false, &e.job, &e.previous);
      if (one.code() == StatusCode::kNotFound) continue;  // deleted meanwhile: nothing to end
      TPUEMU_RETURN_IF_ERROR(one);
      ended.push_back(std::move(e));
    }
    return Status::Ok();
  });
  if (!s.ok()) return s;
  events.Publish();
  return ended;
}

Status JobRecords::Delete(const std::string& name) {
  return store_.Transaction([&](db::Txn& txn) { return jobs_.Delete(txn, name); });
}

}  // namespace tpuemu::service
