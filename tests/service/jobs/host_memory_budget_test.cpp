// Host memory of jobs: the compiled program's plan (engine/hlo/host_memory.h over its lowered
// module), JobHostBytes, the per-job check
// and the budget ledger (service/jobs/host_memory_budget.h).
#include "service/jobs/host_memory_budget.h"

#include <gtest/gtest.h>

#include "engine/frontend/graph_program.h"
#include "engine/hlo/host_memory.h"
#include "service/jobs/job_compile.h"
#include "service/jobs/job_manager.h"
#include "service/workloads/workloads.h"

namespace tpuemu::service {
namespace {

using nlohmann::json;

const engine::Slice kV4Slice = *engine::Slice::FromAcceleratorType("v4-8");

TEST(PeakHostBytesTest, IsTheEvaluatorsSweepOverTheLoweredModule) {
  engine::Graph g("mm");
  g.Parameter("a", {64, 32});
  g.Parameter("b", {32, 16});
  g.MarkOutput(g.Dot("c", "a", "b"));
  engine::CompileCache cache;
  Result<engine::CompileCache::Lookup> lookup = cache.GetOrCompile(g, kV4Slice, {});
  ASSERT_TRUE(lookup.ok()) << lookup.status().ToString();
  const engine::CompiledProgram& program = *lookup->program;
  ASSERT_NE(program.lowered, nullptr) << "the compiler lowers what the jobs run";
  EXPECT_EQ(program.peak_host_bytes,
            engine::hlo::PeakHostBytes(program.lowered->module(), engine::Precision::kDefault));
  // The parameters and the previous step's c for the whole run; at the dot its c (written in
  // place) and DEFAULT's one 4-byte plane per operand element (a and b are read in place).
  const int64_t a = 64 * 32 * 4, b = 32 * 16 * 4, c = 64 * 16 * 4;
  EXPECT_EQ(program.peak_host_bytes, (a + b) + c + c + (a + b));

  // HIGHEST splits each operand into three planes.
  Result<engine::CompileCache::Lookup> highest =
      cache.GetOrCompile(g, kV4Slice, {.precision = engine::Precision::kHighest});
  ASSERT_TRUE(highest.ok());
  EXPECT_EQ(highest->program->peak_host_bytes, (a + b) + c + c + 3 * (a + b));
}

TEST(PeakHostBytesTest, DeadValuesAreReleased) {
  // x -> relu -> relu -> relu: each intermediate dies after its one use.
  engine::Graph g("chain");
  g.Parameter("x", {1024});
  g.Relu("r1", "x");
  g.Relu("r2", "r1");
  g.MarkOutput(g.Relu("r3", "r2"));
  engine::CompileCache cache;
  Result<engine::CompileCache::Lookup> lookup = cache.GetOrCompile(g, kV4Slice, {});
  ASSERT_TRUE(lookup.ok());
  // Each relu is maximum(v, broadcast(0)): at r3 the parameter, the previous step's result, r2,
  // r3's broadcast and r3 (r1 and the other broadcasts are gone), plus the three scalar zeros
  // (constants live for the whole run).
  const int64_t v = 1024 * 4;
  EXPECT_EQ(lookup->program->peak_host_bytes, v + v + 3 * v + 3 * 4);
}

// The planned bytes of the job `body`, as Submit plans them (graph only, no values).
int64_t Planned(const char* body) {
  JobSpec spec = *ParseJobSpec(json::parse(body));
  Workload w = *Workload::BuildGraphOnly(spec);
  EXPECT_TRUE(w.Feeds(0).empty()) << "no value is generated to plan a job";
  engine::CompileCache cache;
  Result<CompiledJob> compiled = CompileJob(cache, "j", spec, w, kV4Slice);
  EXPECT_TRUE(compiled.ok()) << compiled.status().ToString();
  return JobHostBytes(compiled->program(), w.graph(), w.shards());
}

TEST(JobHostBytesTest, CoversTheValuesOfEveryShardAndGrowsWithTheJob) {
  const int64_t small = Planned(R"({"workload": {"mlp": {"layers": 2, "hidden": 256}}})");
  const int64_t wide = Planned(R"({"workload": {"mlp": {"layers": 2, "hidden": 1024}}})");
  // The weights alone of the wide one: 16x1024 + 1024x1024 + 1024x4 floats.
  EXPECT_GT(wide, (16 * 1024 + 1024 * 1024 + 1024 * 4) * 4);
  EXPECT_GT(wide, small);
  // Two data-parallel shards hold two replicas of the values.
  const int64_t two =
      Planned(R"({"workload": {"mlp": {"layers": 2, "hidden": 1024}}, "cores": 2})");
  EXPECT_GT(two, wide);
}

TEST(CheckJobHostBytesTest, NamesBothFiguresAndTheFlag) {
  EXPECT_TRUE(CheckJobHostBytes(1 << 20, {}).ok()) << "no limit set";
  JobLimits limits{.max_job_host_memory_bytes = 1000, .host_memory_budget_bytes = 5000};
  EXPECT_TRUE(CheckJobHostBytes(1000, limits).ok());
  Status s = CheckJobHostBytes(1001, limits);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("needs 1001 bytes"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("1000 bytes"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("--max-job-host-memory-bytes"), std::string::npos) << s.message();
  // A job larger than the whole budget could never start: refused by the budget's figure.
  Status over = CheckJobHostBytes(6000, {.host_memory_budget_bytes = 5000});
  EXPECT_EQ(over.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(over.message().find("--host-memory-budget-bytes"), std::string::npos);
}

TEST(HostMemoryBudgetTest, ReservesWhatFitsAndReleases) {
  HostMemoryBudget budget(100);
  EXPECT_TRUE(budget.TryReserve(60));
  EXPECT_FALSE(budget.TryReserve(50));
  EXPECT_EQ(budget.reserved_bytes(), 60);
  EXPECT_TRUE(budget.TryReserve(40));
  budget.Release(60);
  EXPECT_EQ(budget.reserved_bytes(), 40);
  budget.Release(40);
  // A job larger than the whole budget runs alone (clamped), never concurrently.
  EXPECT_TRUE(budget.TryReserve(500));
  EXPECT_FALSE(budget.TryReserve(1));
  budget.Release(500);
  EXPECT_EQ(budget.reserved_bytes(), 0);

  HostMemoryBudget unlimited(0);
  EXPECT_TRUE(unlimited.TryReserve(int64_t{1} << 50));
  EXPECT_EQ(unlimited.reserved_bytes(), 0);
}

TEST(HostMemoryBudgetTest, DefaultIsHalfOfTheMachine) {
  const int64_t budget = DefaultHostMemoryBudgetBytes();
  EXPECT_GT(budget, int64_t{64} << 20);
}

}  // namespace
}  // namespace tpuemu::service
