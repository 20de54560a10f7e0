// ActiveJob: a queued or running job's in-memory half, kept by JobManager beside its stored row
// from the moment it joins a queue until it ends here: its cancel request (read by the executor
// between ops), the spec it runs with (decoded once), its planned host bytes with the compile that
// plan made, and its attempt for the retry rules (docs/faults.md).
// Threads: built before it is shared and read-only after, except `cancel`, which is thread-safe
// (the JobBoard lock is taken before the CancelRequest's, never after).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "base/status.h"
#include "service/jobs/job.h"
#include "service/jobs/job_compile.h"
#include "service/jobs/job_outcome.h"
#include "service/jobs/job_spec.h"

namespace tpuemu::service {

struct ActiveJob {
  // `job` as it joins its queue, to run `spec` (or to fail with its error when it did not decode)
  // with the plan its admission made.
  static std::shared_ptr<ActiveJob> Queued(const Job& job, Result<JobSpec> spec, int64_t host_bytes,
                                           std::optional<SubmitCompile> submit_compile);
  // `job` queued again after a fault stopped `previous`, its last run: a fresh cancel request,
  // the spec and plan of that run.
  static std::shared_ptr<ActiveJob> Requeued(const Job& job, const ActiveJob& previous);

  bool RetriesLeft() const { return attempt <= max_retries; }

  CancelRequest cancel;
  std::shared_ptr<const JobSpec> spec;          // null when the stored spec did not decode:
  Status spec_error;                            // then why (the run fails with it)
  int64_t host_bytes = 0;                       // planned peak (JobHostBytes); 0 = not planned
  std::optional<SubmitCompile> submit_compile;  // the compile that plan made (a miss), if any
  int64_t attempt = 1;                          // as stored when it was queued
  int64_t max_retries = 0;
};

}  // namespace tpuemu::service
