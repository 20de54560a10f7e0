// Job: a job as the service keeps it — the stored row with its state typed — and the conversions
// to and from db::JobRow (the only place that knows both; db/ stores the state's name).
//
// `spec_json` is the spec's canonical JSON text (JobSpec's CanonicalSpec, written once at submit
// and shown as is by RenderJob); `labels_json` and `result_json` are JSON text as stored. The
// typed spec a job runs with is not part of this value: JobManager hands it to the runner.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/status.h"
#include "db/job_repository.h"
#include "service/jobs/job_state.h"

namespace tpuemu::service {

struct Job {
  int64_t seq = 0;   // submission order; assigned by the store
  std::string name;  // "projects/p/locations/z/nodes/n/jobs/j"
  std::string project;
  std::string zone;
  std::string node_id;
  std::string job_id;
  JobState state = JobState::kQueued;
  int64_t priority = 0;
  std::string labels_json = "{}";
  std::string spec_json = "{}";
  std::optional<std::string> request_id;
  std::string spec_hash;  // of spec_json; a requestId replay must match it
  std::string create_time;
  std::optional<std::string> start_time;
  std::optional<std::string> end_time;
  std::optional<int64_t> exit_code;
  std::optional<std::string> reason;
  std::optional<std::string> result_json;  // with "profile", which only .../metrics shows
  int64_t attempt = 1;                     // 1 + the re-runs after a restart or a fault
  int64_t max_retries = 0;                 // the spec's maxRetries
  std::optional<std::string> owner;        // the replica queueing or running it (db JobRow)

  // "projects/p/locations/z/nodes/n": the node the job runs on.
  std::string NodeName() const;
  friend bool operator==(const Job&, const Job&) = default;
};

db::JobRow JobToRow(const Job& job);
// INTERNAL naming the job when the stored state is not a JobState name.
Result<Job> JobFromRow(db::JobRow row);

}  // namespace tpuemu::service
