// JobParts: what JobManager lends the classes it is made of (JobRunner, JobReplicas) — the board
// of jobs queued or running here, the store's records, the waiters, and what the daemon lent the
// manager. All borrowed; the manager outlives the parts.
#pragma once

#include "engine/frontend/compile_cache.h"
#include "engine/runtime/pool.h"
#include "service/common/scheduler.h"
#include "service/jobs/job_board.h"
#include "service/jobs/job_records.h"
#include "service/jobs/job_spec.h"
#include "service/jobs/job_waiters.h"
#include "service/nodes/node_manager.h"

namespace tpuemu::service {

struct JobParts {
  JobBoard& board;
  JobRecords& records;
  JobWaiters& waiters;
  NodeManager& nodes;
  Scheduler& scheduler;
  engine::Pool& pool;
  engine::CompileCache& cache;
  const JobLimits& limits;
};

}  // namespace tpuemu::service
