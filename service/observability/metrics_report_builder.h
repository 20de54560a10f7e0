// MetricsReportBuilder: the torch_xla-style metrics report of a job, or of every job of a node,
// built from what the jobs stored (so it survives restarts). Format:
// service/observability/metrics_report.h.
//
// Where each entry comes from (per job):
//  * UncachedCompile / CachedCompile (lazy arena) and CreateCompileHandles (runtime arena): the
//    job's compile, a cache miss or hit (job_programs; for jobs from before schema v3 the result's
//    metrics.compileCacheHit). A hit has no CompileTime sample, as in torch_xla.
//  * CompileTime: the compile time of a miss, stamped when the job's run had its program (a compile
//    made at submit to plan the job's host memory is the job's miss too,
//    service/jobs/job_compile.h).
//  * MarkStep: one per stored step; ExecuteTime: each step's emulated device time (cycles / clock,
//    what the TPU would take; not the host time spent emulating it).
//  * TransferToDeviceTime / TransferFromDeviceTime and InboundData / OutboundData: per step, the
//    bytes fed and read back and their time over the host link
//    (service/observability/transfer_model.h).
// Sample timestamps: the compile's end, then each step's end = compile end + the host time of the
// steps so far (host_seconds), so Rate is steps per wall-clock second.
// Errors: NOT_FOUND for an unknown job, or a node that neither exists nor has jobs.
// Thread-safe: stateless besides the borrowed store and node manager (they must outlive it).
#pragma once

#include <string>

#include "base/status.h"
#include "db/job_program_repository.h"
#include "db/job_repository.h"
#include "db/store.h"
#include "service/nodes/node.h"
#include "service/nodes/node_manager.h"
#include "service/observability/metrics_report.h"

namespace tpuemu::service {

class MetricsReportBuilder {
 public:
  MetricsReportBuilder(db::Store& store, NodeManager& nodes);

  Result<std::string> ForJob(const std::string& job_name) const;
  Result<std::string> ForNode(const NodeKey& node) const;

  // The report's arenas for these jobs (exposed for tests).
  Result<std::vector<MetricsArena>> Collect(const std::vector<db::JobRow>& jobs) const;

 private:
  NodeManager& nodes_;
  db::JobRepository jobs_;
  db::JobProgramRepository programs_;
};

// "2024-04-01T12:34:56.123456Z" (or with an offset) as unix nanoseconds; nullopt if malformed.
std::optional<int64_t> ParseRfc3339Ns(const std::string& text);

}  // namespace tpuemu::service
