// JobListRequest and JobPage: what a list of jobs asks for (GET .../nodes/N/jobs, or a zone's
// jobs with GET .../locations/Z/jobs) and the page JobManager::List answers with. Plain values.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "service/common/page_token.h"
#include "service/jobs/job.h"
#include "service/jobs/job_state.h"

namespace tpuemu::service {

struct JobListRequest {
  std::string project;
  std::string zone;                           // "-" = all zones
  std::string node_id;                        // empty = all nodes
  std::optional<JobState> state;              // nullopt = any
  bool unknown_state = false;                 // the client named no JobState: no job matches
  std::map<std::string, std::string> labels;  // every pair must match
  PageRequest page;
};

struct JobPage {
  std::vector<Job> jobs;
  std::string next_page_token;
};

}  // namespace tpuemu::service
