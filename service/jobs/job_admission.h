// Submit's host-memory checks (README "Host memory"): a job's planned peak host bytes, and whether
// one job may hold that much. The admission of a queued job against the daemon-wide budget is
// JobQueues' (job_queues.h). Stateless but for the compile cache: thread-safe.
#pragma once

#include <cstdint>
#include <optional>

#include "base/status.h"
#include "engine/frontend/compile_cache.h"
#include "service/jobs/job_compile.h"
#include "service/jobs/job_spec.h"
#include "service/nodes/node.h"

namespace tpuemu::service {

// The planned peak host bytes of `spec` on `node`: 0 when `limits` set no host-memory limit, for
// an estimate-only hlo job, or when the graph does not compile (the run then reports that error).
// A program job's graph is compiled through `cache` (no values generated); a compile that missed
// is left in *compile, and the job's run reports it as its own. An hlo job: the evaluator's sweep
// over its module (engine/hlo/host_memory.h).
int64_t PlanJobHostBytes(engine::CompileCache& cache, const JobLimits& limits, const JobSpec& spec,
                         const Node& node, std::optional<SubmitCompile>* compile);

// OK when a job planned at `host_bytes` may run under `limits` (host memory); else
// INVALID_ARGUMENT naming both figures and the flag that sets the limit.
Status CheckJobHostBytes(int64_t host_bytes, const JobLimits& limits);

}  // namespace tpuemu::service
