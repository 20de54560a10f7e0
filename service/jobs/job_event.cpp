#include "service/jobs/job_event.h"

#include <string>

namespace tpuemu::service {

db::EventRow JobEvent(const Job& job, std::optional<JobState> previous) {
  db::EventRow e;
  e.project = job.project;
  e.kind = "job";
  e.resource = job.name;
  e.zone = job.zone;
  e.state = std::string(JobStateName(job.state));
  if (previous) e.previous_state = std::string(JobStateName(*previous));
  e.message = "job " + job.job_id + " ";
  if (!previous) {
    e.message += "queued on node " + job.node_id;
  } else {
    e.message += *e.previous_state + " -> " + e.state;
    // Re-queued after a restart or after a fault it is retried after.
    if (job.state == JobState::kQueued)
      e.message += " (attempt " + std::to_string(job.attempt) + ")";
    if (job.exit_code && job.reason) {
      e.message += " (exit code " + std::to_string(*job.exit_code) + ": " + *job.reason + ")";
    }
  }
  return e;
}

}  // namespace tpuemu::service
