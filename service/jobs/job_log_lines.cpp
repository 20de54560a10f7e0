#include "service/jobs/job_log_lines.h"

#include <cstdio>

namespace tpuemu::service {

std::string QueuedLine(const std::string& node_name) { return "queued on " + node_name; }

std::string RequeuedLine(int64_t attempt) {
  return "re-queued after a restart of tpuemud (attempt " + std::to_string(attempt) + ")";
}

std::string AdoptedLine(const std::string& dead_replica, bool was_running, int64_t attempt) {
  std::string line =
      dead_replica.empty()
          ? std::string("adopted by this replica (the job had no live owner)")
          : "adopted from replica " + dead_replica + ", which is gone (no heartbeat)";
  if (was_running) return line + ": re-queued (attempt " + std::to_string(attempt) + ")";
  return line + ": it keeps its place in the queue";
}

std::string RunningLine(int64_t attempt) {
  return "running (attempt " + std::to_string(attempt) + ")";
}

std::string HostMemoryWaitLine(int64_t needed, int64_t reserved, int64_t budget) {
  return "waiting for host memory: needs " + std::to_string(needed) + " bytes at its peak; " +
         std::to_string(reserved) + " of the " + std::to_string(budget) +
         "-byte budget reserved by running jobs";
}

std::string ShutdownRequeuedLine() {
  return "interrupted by the shutdown of tpuemud; re-queued to run after the restart";
}

std::string FaultRetryLine(const std::string& fault, int64_t attempt, int64_t max_retries) {
  return fault + "; retry " + std::to_string(attempt - 1) + " of " + std::to_string(max_retries) +
         ": re-queued to run when the node can run jobs again (attempt " + std::to_string(attempt) +
         ")";
}

std::string NodeHeldLine() {
  return "the node is under host maintenance: the job waits for it to end";
}

std::string FaultWaitLine(const std::string& fault) {
  return fault +
         "; the job had not started, so it keeps its place and waits for the node (no retry used)";
}

std::string CompileLine(const CompileFacts& facts) {
  char line[256];
  std::snprintf(line, sizeof line,
                "compile: %s (%.3f ms), %zu ops on %s x%d TensorCore(s), peak HBM %lld bytes "
                "per TensorCore",
                facts.cache_hit ? "cache hit" : "cache miss", facts.compile_seconds * 1e3,
                facts.ops, facts.accelerator_type.c_str(), facts.cores,
                static_cast<long long>(facts.hbm_peak_bytes_per_tensorcore));
  return line;
}

std::string HloLine(const HloFacts& f) {
  char tail[256];
  std::snprintf(
      tail, sizeof tail,
      " (%d TensorCore(s) each), estimate %lld cycles (%.3e s) per step, peak HBM %lld of "
      "%.0f bytes per TensorCore (%s)",
      f.tensorcores_per_device, static_cast<long long>(f.cycles), f.seconds,
      static_cast<long long>(f.hbm_peak_bytes_per_tensorcore), f.hbm_capacity_bytes_per_tensorcore,
      f.fits ? "fits" : "does not fit");
  return "hlo: module " + f.module + ", " + std::to_string(f.instructions) + " instructions on " +
         std::to_string(f.devices) + " device(s) of " + f.accelerator_type + tail;
}

std::string StepLine(const db::JobStepRow& step) {
  char line[256];
  std::snprintf(line, sizeof line,
                "step %lld loss=%s step_time=%.3e s cycles=%lld mxu_util=%.3f host=%.3f ms",
                static_cast<long long>(step.step),
                step.loss ? std::to_string(*step.loss).c_str() : "n/a", step.emulated_seconds,
                static_cast<long long>(step.cycles), step.mxu_utilization, step.host_seconds * 1e3);
  return line;
}

std::string TerminalLine(const JobOutcome& outcome) {
  return std::string(JobStateName(outcome.state)) + " (exit code " +
         std::to_string(outcome.exit_code) + "): " + outcome.reason;
}

}  // namespace tpuemu::service
