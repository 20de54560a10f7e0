// JobSubmission: a job a client submits to a node (POST .../nodes/N/jobs), typed — what
// JobManager::Submit takes. api/job_codec.h makes one from the request (its body decoded and
// checked with ParseJobSpec under the daemon's JobLimits, the jobId query parameter); the
// checks that need the node (READY, cores, an hlo job's devices, host memory) are JobManager's.
// A plain value: it owns its spec (whose program graph and HLO module are shared, immutable).
#pragma once

#include <string>

#include "service/jobs/job_spec.h"
#include "service/nodes/node.h"

namespace tpuemu::service {

struct JobSubmission {
  NodeKey node;
  std::string job_id;  // empty = generated ("job-" and ten hex digits)
  JobSpec spec;        // as ParseJobSpec decoded it (requestId included)
};

}  // namespace tpuemu::service
