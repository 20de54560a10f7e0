// JobRecords: a job's records in the store as the service sees them — the job row (typed as a
// Job), its log lines, its step rows and its program row — with every change of a job's life as
// one transaction: insert (or requestId replay), re-queue, start, compile, step, terminal, delete.
// Each change writes its log line (job_log_lines.h) in the same transaction, and each state change
// its event (job_event.h) through the EventSink, published once the transaction committed.
//
// Holds only the Store reference (not owned; it must outlive this): as thread-safe as the Store.
// Errors: NOT_FOUND for a missing job, INTERNAL for a row in an unknown state, ALREADY_EXISTS as
// documented, and whatever the Store reports.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "db/job_program_repository.h"
#include "db/job_repository.h"
#include "db/node_repository.h"
#include "db/store.h"
#include "service/common/event_sink.h"
#include "service/jobs/job.h"
#include "service/jobs/job_compile.h"
#include "service/jobs/job_outcome.h"

namespace tpuemu::service {

class WriteBatcher;  // service/common/write_batcher.h

// What a claim of a queued job found (JobRecords::Claim).
enum class ClaimResult {
  kStarted,  // QUEUED -> RUNNING, by this replica
  kBusy,     // the node runs a job, another job comes first, or the node is under maintenance
  kGone,     // no longer this replica's to start: ended, cancelled, or re-owned
};

// A job a terminal write found: as stored, and the state it left (nullopt when it was terminal
// already or another replica's).
struct EndedJob {
  Job job;
  std::optional<JobState> previous;
};

class JobRecords {
 public:
  explicit JobRecords(db::Store& store)
      : store_(store), jobs_(store), programs_(store), nodes_(store) {}

  // The replica these records write for (jobs.owner; NodeManagerOptions::replica_id). Set before
  // the first write.
  void SetReplicaId(std::string id) { replica_id_ = std::move(id); }
  const std::string& replica_id() const { return replica_id_; }

  // Where state changes write their events (borrowed; null = none). Set before the first write.
  void SetEventSink(EventSink* sink) { event_sink_ = sink; }
  // The group commit a job's own writes share with the others' (submit, claim, compile, steps,
  // end; borrowed; null = a transaction each). Set before the first write.
  void SetWriteBatcher(WriteBatcher* batcher) { batcher_ = batcher; }

  Result<Job> Get(const std::string& name) const;
  // Up to `limit` jobs matching `filter` with seq > after_seq, by seq.
  Result<std::vector<Job>> List(const db::JobFilter& filter, int64_t after_seq, int limit) const;
  Result<std::vector<Job>> ListInState(JobState state) const;
  Result<std::vector<std::string>> Logs(const std::string& name, int64_t offset) const;
  Result<std::vector<db::JobStepRow>> Steps(const std::string& name) const;

  // Inserts `job` (QUEUED) with its "queued on" line and returns it with its seq; *inserted =
  // true. If the job's requestId was already used on its node, returns that job instead
  // (*inserted = false), or ALREADY_EXISTS when it was used with a different spec hash.
  Result<Job> InsertOrReplay(Job job, bool* inserted);
  // Appends `line` to the job's log (a state it waits in, e.g. for host memory).
  Status AppendLine(const std::string& name, const std::string& line);
  // A job interrupted by shutdown back to QUEUED (attempt + 1, no start time) with
  // ShutdownRequeuedLine. Returns the job as stored; *requeued is false when it was not RUNNING.
  Result<Job> RequeueInterrupted(const std::string& name, bool* requeued);
  // The same for a job a fault interrupted that has retries left, with FaultRetryLine(`fault`).
  Result<Job> RequeueAfterFault(const std::string& name, const std::string& fault, bool* requeued);
  // QUEUED -> RUNNING with the start time and the running line, when the job is this replica's,
  // its node runs no job (the one-job rule, across replicas; schema v8 enforces it too), it is
  // the node's next job (priority, then age, whichever replica queued it) and the node is not
  // under maintenance. The row is locked with SELECT … FOR UPDATE SKIP LOCKED. Returns the job
  // as stored with *result.
  Result<Job> Claim(const std::string& name, ClaimResult* result);
  // Makes this replica the owner of the QUEUED and RUNNING jobs no live replica owns (and of its
  // own, with `include_own`); the RUNNING ones go back to QUEUED (attempt + 1). Its log says why:
  // RequeuedLine for this replica's own RUNNING job (a restart), AdoptedLine naming the replica it
  // came from for another's (queued or running).
  // Returns them, every one QUEUED, by seq.
  Result<std::vector<Job>> Adopt(bool include_own, std::vector<JobState>* previous);
  // The program row, the profile as the job's result so far, and the compile line.
  Status RecordCompile(const std::string& name, const CompiledJob& compiled);
  // The same without waiting for its commit: queued in the batcher ahead of the run's later
  // writes, which then usually share its commit (a transaction of its own without a batcher).
  void RecordCompileLater(const std::string& name, const CompiledJob& compiled);
  // The step row and its line. ABORTED when the job is no longer RUNNING on this replica
  // (cancelled through another replica, or adopted by one): the run must stop writing.
  Status RecordStep(const std::string& name, const db::JobStepRow& step);
  // Makes the job terminal with `outcome`, the end time, `result` (unless null) and the terminal
  // line, unless it already is terminal or (without `any_replica`) another replica owns it.
  // Returns the job as stored; *previous is the state it left, nullopt when it did not change.
  // `last_step`, if given, is written first as RecordStep writes it (when the job is still RUNNING
  // on this replica), in the same transaction: a run's last step and its end are one commit.
  Result<Job> MarkTerminal(const std::string& name, const JobOutcome& outcome,
                           const nlohmann::json& result, std::optional<JobState>* previous,
                           bool any_replica = false, const db::JobStepRow* last_step = nullptr);
  // What MarkTerminalLater tells once the end committed or failed: the job as stored (or the
  // error) and the state it left (nullopt when it did not change).
  using Marked = std::function<void(Result<Job> job, std::optional<JobState> previous)>;
  // MarkTerminal (this replica's run, with its last step) without waiting for the commit: `done`
  // runs on the batcher's thread once it committed or failed (at once on the caller's thread
  // without a batcher, or after Stop), after the events were published. Later writes queued by
  // any thread go after it in the batcher, so e.g. the node's next claim finds this job ended.
  void MarkTerminalLater(const std::string& name, const JobOutcome& outcome,
                         const nlohmann::json& result, std::optional<db::JobStepRow> last_step,
                         Marked done);
  // The same for several jobs (no result), in one transaction: the jobs a stop, delete or
  // maintenance ends together. Returns each job found, as stored, with the state it left.
  Result<std::vector<EndedJob>> MarkTerminal(
      const std::vector<std::pair<std::string, JobOutcome>>& ends);
  Status Delete(const std::string& name);

 private:
  // `result`: the result's JSON text, nullopt to keep the stored one.
  Status MarkTerminal(db::Txn& txn, PendingEvents& events, const std::string& name,
                      const JobOutcome& outcome, const std::optional<std::string>& result,
                      bool any_replica, Job* job, std::optional<JobState>* previous) const;
  // RecordCompile's body, with the profile already serialized.
  std::function<Status(db::Txn&)> CompileBody(const std::string& name,
                                              const CompiledJob& compiled) const;
  Result<Job> Get(db::Txn& txn, const std::string& name) const;
  Status RecordStep(db::Txn& txn, const std::string& name, const db::JobStepRow& step) const;
  Status Update(db::Txn& txn, const Job& job, const std::string& line) const;
  // RUNNING -> QUEUED, attempt + 1, no start time, with the line `line_of` makes of the job as
  // re-queued; *requeued is false when it was not RUNNING.
  Result<Job> RequeueRunning(const std::string& name,
                             const std::function<std::string(const Job&)>& line_of, bool* requeued);
  // `body` in the batcher's shared transaction when there is one, else in one of its own.
  Status Write(const std::function<Status(db::Txn&)>& body);

  db::Store& store_;
  EventSink* event_sink_ = nullptr;
  WriteBatcher* batcher_ = nullptr;
  db::JobRepository jobs_;
  db::JobProgramRepository programs_;
  db::NodeRepository nodes_;
  std::string replica_id_ = "local";
};

}  // namespace tpuemu::service
