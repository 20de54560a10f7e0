// The lines of a job's log (GET .../jobs/J/logs), one function per kind of line, so the runner,
// the manager and the tests agree on the text. Stateless: thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include "db/job_repository.h"
#include "service/jobs/job_outcome.h"

namespace tpuemu::service {

// "queued on projects/p/locations/z/nodes/n"
std::string QueuedLine(const std::string& node_name);
// "re-queued after a restart of tpuemud (attempt 2)"
std::string RequeuedLine(int64_t attempt);
// "adopted from replica r-1, which is gone (no heartbeat): re-queued (attempt 2)" for a job
// that was RUNNING there, "… : it keeps its place in the queue" for a QUEUED one; `dead_replica`
// empty: a job that had no owner ("adopted from no live replica").
std::string AdoptedLine(const std::string& dead_replica, bool was_running, int64_t attempt);
// "running (attempt 1)"
std::string RunningLine(int64_t attempt);
// "waiting for host memory: needs 123 bytes at its peak; 456 of the 789-byte budget reserved by
// running jobs"
std::string HostMemoryWaitLine(int64_t needed, int64_t reserved, int64_t budget);
// "interrupted by the shutdown of tpuemud; re-queued to run after the restart"
std::string ShutdownRequeuedLine();
// "interrupted by host maintenance: …; retry 1 of 2: re-queued to run when the node can run jobs
// again (attempt 2)" — `fault` names the fault; `attempt` is the attempt to come.
std::string FaultRetryLine(const std::string& fault, int64_t attempt, int64_t max_retries);
// "the node is under host maintenance: the job waits for it to end"
std::string NodeHeldLine();
// "interrupted by host maintenance: …; the job had not started, so it keeps its place and waits
// for the node (no retry used)"
std::string FaultWaitLine(const std::string& fault);

// What the compile line reports.
struct CompileFacts {
  bool cache_hit = false;
  double compile_seconds = 0;
  size_t ops = 0;
  std::string accelerator_type;  // "v4-8"
  int cores = 1;
  int64_t hbm_peak_bytes_per_tensorcore = 0;
};
// "compile: cache miss (1.234 ms), 3 ops on v4-8 x1 TensorCore(s), peak HBM 768 bytes per
// TensorCore"
std::string CompileLine(const CompileFacts& facts);
// What the line of an hlo job's pricing reports (in place of the compile line).
struct HloFacts {
  std::string module;
  int64_t instructions = 0;
  int64_t devices = 1;
  int tensorcores_per_device = 1;
  std::string accelerator_type;
  int64_t cycles = 0;  // one step, as estimated
  double seconds = 0;
  int64_t hbm_peak_bytes_per_tensorcore = 0;
  double hbm_capacity_bytes_per_tensorcore = 0;
  bool fits = true;
};
// "hlo: module m, 57 instructions on 4 device(s) of v4-8 (2 TensorCore(s) each), estimate 1234
// cycles (1.234e-06 s) per step, peak HBM 768 of 17179869184 bytes per TensorCore (fits)"
std::string HloLine(const HloFacts& facts);
// "step 0 loss=1.386294 step_time=1.234e-06 s cycles=1234 mxu_util=0.123 host=0.456 ms"
// (loss=n/a for a workload without a loss).
std::string StepLine(const db::JobStepRow& step);
// "SUCCEEDED (exit code 0): completed 1 steps"
std::string TerminalLine(const JobOutcome& outcome);

}  // namespace tpuemu::service
