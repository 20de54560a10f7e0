#include "service/jobs/job_log_lines.h"

#include <gtest/gtest.h>

namespace tpuemu::service {
namespace {

TEST(JobLogLinesTest, LifeCycleLines) {
  EXPECT_EQ(QueuedLine("projects/p/locations/z/nodes/n"),
            "queued on projects/p/locations/z/nodes/n");
  EXPECT_EQ(RequeuedLine(2), "re-queued after a restart of tpuemud (attempt 2)");
  EXPECT_EQ(AdoptedLine("r-1", true, 3),
            "adopted from replica r-1, which is gone (no heartbeat): re-queued (attempt 3)");
  EXPECT_EQ(AdoptedLine("", false, 1),
            "adopted by this replica (the job had no live owner): it keeps its place in the queue");
  EXPECT_EQ(RunningLine(1), "running (attempt 1)");
  EXPECT_EQ(FaultRetryLine("interrupted by host maintenance: m", 3, 4),
            "interrupted by host maintenance: m; retry 2 of 4: re-queued to run when the node can "
            "run jobs again (attempt 3)");
  EXPECT_EQ(FaultWaitLine("f"),
            "f; the job had not started, so it keeps its place and waits for the node (no retry "
            "used)");
  EXPECT_EQ(TerminalLine(Ended(JobState::kSucceeded, "completed 3 steps")),
            "SUCCEEDED (exit code 0): completed 3 steps");
  EXPECT_EQ(TerminalLine(Ended(JobState::kTimedOut, "the job exceeded timeoutSeconds=1")),
            "TIMED_OUT (exit code 124): the job exceeded timeoutSeconds=1");
}

TEST(JobLogLinesTest, CompileLine) {
  EXPECT_EQ(CompileLine({.cache_hit = false,
                         .compile_seconds = 0.0012345,
                         .ops = 3,
                         .accelerator_type = "v4-8",
                         .cores = 2,
                         .hbm_peak_bytes_per_tensorcore = 768}),
            "compile: cache miss (1.234 ms), 3 ops on v4-8 x2 TensorCore(s), peak HBM 768 bytes "
            "per TensorCore");
  EXPECT_TRUE(CompileLine({.cache_hit = true}).starts_with("compile: cache hit (0.000 ms)"));
}

TEST(JobLogLinesTest, HloLine) {
  EXPECT_EQ(HloLine({.module = "jit_step",
                     .instructions = 57,
                     .devices = 4,
                     .tensorcores_per_device = 2,
                     .accelerator_type = "v4-8",
                     .cycles = 1234,
                     .seconds = 1.234e-6,
                     .hbm_peak_bytes_per_tensorcore = 768,
                     .hbm_capacity_bytes_per_tensorcore = 17179869184.0,
                     .fits = true}),
            "hlo: module jit_step, 57 instructions on 4 device(s) of v4-8 (2 TensorCore(s) each), "
            "estimate 1234 cycles (1.234e-06 s) per step, peak HBM 768 of 17179869184 bytes per "
            "TensorCore (fits)");
  EXPECT_TRUE(HloLine({.fits = false}).ends_with("(does not fit)"));
}

TEST(JobLogLinesTest, StepLineWithAndWithoutLoss) {
  db::JobStepRow step{.step = 4,
                      .loss = 0.5,
                      .cycles = 1234,
                      .emulated_seconds = 1.5e-6,
                      .mxu_utilization = 0.25,
                      .flops = 1,
                      .host_seconds = 0.002};
  EXPECT_EQ(StepLine(step),
            "step 4 loss=0.500000 step_time=1.500e-06 s cycles=1234 mxu_util=0.250 host=2.000 ms");
  step.loss.reset();
  EXPECT_EQ(StepLine(step),
            "step 4 loss=n/a step_time=1.500e-06 s cycles=1234 mxu_util=0.250 host=2.000 ms");
}

}  // namespace
}  // namespace tpuemu::service
