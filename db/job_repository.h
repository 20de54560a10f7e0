// JobRepository: typed access to the `jobs`, `job_logs` and `job_steps` tables (schema v2;
// jobs.max_retries since v7).
//
// Writes take a Txn& so the service can change a job, append its log line and its step row in one
// transaction; reads have a Txn& form and a convenience form running its own Store::Read. The
// repository holds only the Store reference (not owned; the Store must outlive it), so it is as
// thread-safe as the Store. Errors: kNotFound for a missing job, kAlreadyExists for a duplicate
// name or (node, request_id), and whatever the Store reports.
// Floating-point metrics are bound as decimal text (17 significant digits, exact round trip) into
// REAL columns, since Statement has no double binder.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "db/store.h"

namespace tpuemu::db {

struct JobRow {
  int64_t seq = 0;   // assigned by Insert; never changed by Update
  std::string name;  // "projects/p/locations/z/nodes/n/jobs/j"
  std::string project;
  std::string zone;
  std::string node_id;
  std::string job_id;
  std::string state;
  int64_t priority = 0;
  std::string labels_json = "{}";
  std::string spec_json = "{}";
  std::optional<std::string> request_id;
  std::string spec_hash;
  std::string create_time;
  std::optional<std::string> start_time;
  std::optional<std::string> end_time;
  std::optional<int64_t> exit_code;
  std::optional<std::string> reason;
  std::optional<std::string> result_json;
  int64_t attempt = 1;
  int64_t max_retries = 0;  // schema v7
  // The replica whose queue holds the job (QUEUED) or that runs it (RUNNING); schema v8.
  std::optional<std::string> owner;
  friend bool operator==(const JobRow&, const JobRow&) = default;
};

struct JobStepRow {
  int64_t step = 0;
  std::optional<double> loss;  // absent for workloads without a loss (matmul, programs)
  int64_t cycles = 0;
  double emulated_seconds = 0;
  double mxu_utilization = 0;
  double flops = 0;
  double host_seconds = 0;
  friend bool operator==(const JobStepRow&, const JobStepRow&) = default;
};

// Which jobs a List returns. Empty strings match everything; node_id needs project and zone.
struct JobFilter {
  std::string project;
  std::string zone;  // "-" = every zone of the project
  std::string node_id;
  std::string state;
};

class JobRepository {
 public:
  explicit JobRepository(Store& store) : store_(store) {}

  // Inserts with a fresh seq and returns it. kAlreadyExists for a taken name or request id.
  Result<int64_t> Insert(Txn& txn, const JobRow& row) const;
  // Replaces the columns a job's run changes: state, start and end time, exit code, reason,
  // result, attempt and owner. The others (name, node, spec, labels, priority, request id, create
  // time, max retries) are set once by Insert and never change; `row`'s values there are ignored.
  Status Update(Txn& txn, const JobRow& row) const;
  // Deletes the job with its logs and steps. kNotFound if absent.
  Status Delete(Txn& txn, std::string_view name) const;
  Result<JobRow> Get(Txn& txn, std::string_view name) const;
  Result<JobRow> Get(std::string_view name) const;
  // The job of node (project, zone, node_id) submitted with request_id; kNotFound if none.
  Result<JobRow> GetByRequestId(Txn& txn, std::string_view project, std::string_view zone,
                                std::string_view node_id, std::string_view request_id) const;
  // Up to `limit` jobs (no limit when <= 0) matching `filter` with seq > after_seq, by seq.
  Result<std::vector<JobRow>> List(const JobFilter& filter, int64_t after_seq, int limit) const;
  // The FROM/WHERE/ORDER part of List's SQL: only the filters that are set (zone "-" is none),
  // ?1..?4 project, zone, node_id, state, ?5 after_seq, ?6 limit (db/list_queries.h).
  static std::string ListSql(const JobFilter& filter);
  // Makes `owner` the owner of every QUEUED or RUNNING job whose owner is not a live replica
  // (absent from `replicas`, or unset) — and of those `owner` already owns when `include_own` —
  // and returns them by seq. `previous_owner` (optional) gets, for each job it took from
  // another owner, that owner's id ("" for a job that had none).
  Result<std::vector<JobRow>> AdoptOrphans(
      Txn& txn, std::string_view owner, bool include_own,
      std::map<std::string, std::string>* previous_owner = nullptr) const;
  // The RUNNING job of node (project, zone, node_id), if any (at most one: schema v8's index).
  Result<std::optional<std::string>> RunningOnNode(Txn& txn, std::string_view project,
                                                   std::string_view zone,
                                                   std::string_view node_id) const;
  // The QUEUED job of that node that runs next: highest priority, then oldest.
  Result<std::optional<std::string>> NextQueuedOnNode(Txn& txn, std::string_view project,
                                                      std::string_view zone,
                                                      std::string_view node_id) const;
  // The job's state and owner only (not its spec or result): what a step checks before it writes.
  // kNotFound if absent.
  Result<std::pair<std::string, std::optional<std::string>>> StateAndOwner(
      Txn& txn, std::string_view name) const;
  // The job `name` if it is QUEUED, locked for this transaction (PostgreSQL: SELECT … FOR UPDATE
  // SKIP LOCKED; a row another transaction holds reads as absent). kNotFound otherwise.
  Result<JobRow> LockQueued(Txn& txn, std::string_view name) const;
  // Every job in `state` (e.g. QUEUED and RUNNING at recovery), by seq.
  Result<std::vector<JobRow>> ListInState(std::string_view state) const;

  // Appends one log line; line numbers start at 0 and are the job's count of lines so far.
  Status AppendLog(Txn& txn, std::string_view job, std::string_view text) const;
  Status AppendStep(Txn& txn, std::string_view job, const JobStepRow& step) const;
  // Removes the steps and log lines of a job (a re-queued job starts over).
  Status ClearOutputs(Txn& txn, std::string_view job) const;
  // Log lines from line `offset` on, in order.
  Result<std::vector<std::string>> Logs(std::string_view job, int64_t offset) const;
  Result<std::vector<JobStepRow>> Steps(std::string_view job) const;

 private:
  Store& store_;
};

}  // namespace tpuemu::db
