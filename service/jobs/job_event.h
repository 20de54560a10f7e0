// The events-feed row of a job state change (kind "job"): a new job (previous nullopt) is
// "queued on node N"; a terminal one carries its exit code and reason. Written by JobRecords in
// the change's transaction.
#pragma once

#include <optional>

#include "db/event_repository.h"
#include "service/jobs/job.h"

namespace tpuemu::service {

db::EventRow JobEvent(const Job& job, std::optional<JobState> previous);

}  // namespace tpuemu::service
