#include "service/jobs/active_job.h"

#include <utility>

#include <nlohmann/json.hpp>

namespace tpuemu::service {

std::shared_ptr<ActiveJob> ActiveJob::Queued(const Job& job, Result<JobSpec> spec,
                                             int64_t host_bytes,
                                             std::optional<SubmitCompile> submit_compile) {
  auto active = std::make_shared<ActiveJob>();
  active->host_bytes = host_bytes;
  active->submit_compile = std::move(submit_compile);
  active->attempt = job.attempt;
  active->max_retries = job.max_retries;
  if (spec.ok()) {
    // The run needs a program's graph, not its JSON (the job keeps the canonical text): drop the
    // DOM, which costs far more memory per value than the graph, while the job waits.
    spec->program = nlohmann::json();
    active->spec = std::make_shared<const JobSpec>(std::move(spec).value());
  } else {
    active->spec_error = spec.status();
  }
  return active;
}

std::shared_ptr<ActiveJob> ActiveJob::Requeued(const Job& job, const ActiveJob& previous) {
  auto active = std::make_shared<ActiveJob>();
  active->spec = previous.spec;
  active->spec_error = previous.spec_error;
  active->host_bytes = previous.host_bytes;
  active->submit_compile = previous.submit_compile;
  active->attempt = job.attempt;
  active->max_retries = job.max_retries;
  return active;
}

}  // namespace tpuemu::service
