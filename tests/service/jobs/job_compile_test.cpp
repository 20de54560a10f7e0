// CompileJob: the cache lookup, the profile, the compile line and the job_programs row.
#include "service/jobs/job_compile.h"

#include <gtest/gtest.h>

#include "service/observability/transfer_model.h"

namespace tpuemu::service {
namespace {

using nlohmann::json;

const engine::Slice kV4 = *engine::Slice::FromAcceleratorType("v4-8");

// CompileJob of the spec `body` for a v4-8 through `cache`.
Result<CompiledJob> Compile(engine::CompileCache& cache, const char* body) {
  JobSpec spec = *ParseJobSpec(json::parse(body));
  Workload w = *Workload::Build(spec);
  return CompileJob(cache, "j", spec, w, kV4);
}

TEST(CompileJobTest, MissThenHitWithProfileLineAndRecord) {
  engine::CompileCache cache;
  const engine::Slice slice = *engine::Slice::FromAcceleratorType("v4-8");
  JobSpec spec = *ParseJobSpec(json::parse(R"({"workload": {"matmul": {"m": 64, "n": 32,
                                                                       "k": 16}}})"));
  Workload w = *Workload::Build(spec);
  Result<CompiledJob> first =
      CompileJob(cache, "projects/p/locations/z/nodes/n/jobs/a", spec, w, slice);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_FALSE(first->lookup.hit);
  EXPECT_EQ(first->tensorcores, 1);
  const engine::CompiledProgram& program = first->program();
  // One op does work: the dot (the parameters are already in HBM).
  ASSERT_EQ(first->profile["ops"].size(), 1u);
  EXPECT_EQ(first->profile["ops"][0]["op"], "dot");
  EXPECT_EQ(first->profile["ops"][0]["unit"], "mxu");
  EXPECT_EQ(first->profile["hbmPeakBytesPerTensorCore"], program.peak_hbm_bytes_per_tensorcore);
  EXPECT_TRUE(first->log_line.starts_with("compile: cache miss (")) << first->log_line;
  EXPECT_NE(first->log_line.find("3 ops on v4-8 x1 TensorCore(s)"), std::string::npos)
      << first->log_line;
  EXPECT_EQ(first->record.job, "projects/p/locations/z/nodes/n/jobs/a");
  EXPECT_FALSE(first->record.compile_cache_hit);
  EXPECT_EQ(first->record.tensorcores, 1);
  EXPECT_EQ(first->record.hbm_peak_bytes_per_tensorcore, program.peak_hbm_bytes_per_tensorcore);
  const StepTransferBytes transfer = TransferBytesPerStep(w.graph(), 1);
  EXPECT_EQ(first->record.transfer_to_device_bytes_per_step, transfer.to_device);
  EXPECT_EQ(first->record.transfer_from_device_bytes_per_step, transfer.from_device);
  EXPECT_GT(first->record.compile_end_unix_ns, 0);

  Result<CompiledJob> second = CompileJob(cache, "b", spec, w, slice);
  ASSERT_TRUE(second.ok());
  EXPECT_TRUE(second->lookup.hit);
  EXPECT_TRUE(second->record.compile_cache_hit);
  EXPECT_TRUE(second->log_line.starts_with("compile: cache hit (0.000 ms)")) << second->log_line;
}

// The compile a submit made to plan the job's host memory is the job's: its run finds the program
// in the cache but reports that miss; another job (or an evicted program) gets its own lookup.
TEST(CompileJobTest, ACompileMadeAtSubmitIsTheRunsMiss) {
  engine::CompileCache cache;
  JobSpec spec = *ParseJobSpec(json::parse(R"({"workload": {"matmul": {"m": 64, "n": 32,
                                                                       "k": 16}}})"));
  Workload w = *Workload::Build(spec);
  Result<CompiledJob> at_submit = CompileJob(cache, "", spec, w, kV4);
  ASSERT_TRUE(at_submit.ok()) << at_submit.status().ToString();
  ASSERT_FALSE(at_submit->lookup.hit);
  const SubmitCompile submit{.program = at_submit->lookup.program, .compile_seconds = 0.25};

  Result<CompiledJob> run = CompileJob(cache, "a", spec, w, kV4, submit);
  ASSERT_TRUE(run.ok());
  EXPECT_FALSE(run->lookup.hit);
  EXPECT_EQ(run->lookup.compile_seconds, 0.25);
  EXPECT_FALSE(run->record.compile_cache_hit);
  EXPECT_EQ(run->record.compile_seconds, 0.25);
  EXPECT_TRUE(run->log_line.starts_with("compile: cache miss (250.000 ms)")) << run->log_line;

  // A job that did not compile at submit is served by the cache.
  Result<CompiledJob> other = CompileJob(cache, "b", spec, w, kV4);
  ASSERT_TRUE(other.ok());
  EXPECT_TRUE(other->record.compile_cache_hit);
  // A submit compile of another program (here: expired) does not turn a hit into a miss.
  const SubmitCompile stale{.program = std::shared_ptr<const engine::CompiledProgram>(),
                            .compile_seconds = 0.25};
  Result<CompiledJob> unrelated = CompileJob(cache, "c", spec, w, kV4, stale);
  ASSERT_TRUE(unrelated.ok());
  EXPECT_TRUE(unrelated->record.compile_cache_hit);
}

TEST(CompileJobTest, DataParallelStepsOccupyOneTensorCorePerShard) {
  engine::CompileCache cache;
  Result<CompiledJob> compiled = Compile(cache, R"({"workload": {"cnn": {}}, "cores": 4})");
  ASSERT_TRUE(compiled.ok()) << compiled.status().ToString();
  EXPECT_EQ(compiled->tensorcores, 4);
  EXPECT_EQ(compiled->record.tensorcores, 4);
  EXPECT_EQ(compiled->program().options.tensorcores, 1);  // each shard's program: one core
  EXPECT_NE(compiled->log_line.find("x4 TensorCore(s)"), std::string::npos) << compiled->log_line;
}

// (An HBM overflow fails the job: JobManagerTest.HbmOverflowFailsWithXlaMessage.)
TEST(CompileJobTest, CompileErrorsAreTheCompilers) {
  engine::CompileCache cache;
  Result<CompiledJob> compiled = Compile(cache, R"({"workload": {"matmul": {}}, "cores": 16})");
  ASSERT_FALSE(compiled.ok());
  const Status expected = engine::ValidateOptions(kV4, {.tensorcores = 16});
  EXPECT_EQ(expected.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(compiled.status().code(), expected.code());
  EXPECT_EQ(compiled.status().message(), expected.message());
}

}  // namespace
}  // namespace tpuemu::service
