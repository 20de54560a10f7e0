// hlo jobs below HTTP: the JobSpec's "hlo" field (decoded once, canonical JSON round trip, every
// error naming its field, line or limit), the node check, and RunHloJob's estimate-only result,
// profile rows and cancellation.
#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "db/store.h"
#include "service/jobs/hlo_job_runner.h"
#include "service/jobs/job_spec.h"
#include "tests/engine/hlo/hlo_test_util.h"

namespace tpuemu::service {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

using engine::hlo::testing::Testdata;  // tests/engine/hlo/testdata/<name>

constexpr const char* kDense = R"(HloModule jit_dense
ENTRY %main (x: f32[8,16], w: f32[16,4]) -> f32[8,4] {
  %x = f32[8,16]{1,0} parameter(0)
  %w = f32[16,4]{1,0} parameter(1)
  ROOT %dot.1 = f32[8,4]{1,0} dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, metadata={op_name="jit(dense)/dot_general"}
}
)";

Status Error(const json& body, const JobLimits& limits = {}) {
  Result<JobSpec> spec = ParseJobSpec(body, limits);
  EXPECT_FALSE(spec.ok());
  return spec.status();
}

TEST(HloJobSpec, DecodedOnceAndCanonical) {
  const json body = {{"hlo", {{"text", kDense}, {"params", {{"1", 0.5}}}}}, {"steps", 2}};
  Result<JobSpec> spec = ParseJobSpec(body);
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(spec->kind, WorkloadKind::kHlo);
  EXPECT_EQ(WorkloadKindName(spec->kind), "hlo");
  ASSERT_NE(spec->hlo, nullptr);
  EXPECT_EQ(spec->hlo->module->name, "jit_dense");
  EXPECT_EQ(spec->cores, 1);
  EXPECT_EQ(spec->hlo->params.at(1), std::vector<double>{0.5});
  const json canonical = JobSpecToJson(*spec);
  EXPECT_EQ(canonical["hlo"]["text"], kDense);
  EXPECT_EQ(canonical["hlo"]["estimateOnly"], false);
  Result<JobSpec> again = ParseJobSpec(canonical);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(JobSpecToJson(*again), canonical);
  EXPECT_EQ(JobSpecHash(*again), JobSpecHash(*spec));
}

TEST(HloJobSpec, DevicesComeFromTheHeaderOrTheCores) {
  Result<JobSpec> four = ParseJobSpec({{"hlo", {{"text", Testdata("data_parallel_step.hlo")}}}});
  ASSERT_TRUE(four.ok()) << four.status().ToString();
  EXPECT_EQ(four->cores, 4);  // replica_count=4
  EXPECT_EQ(JobSpecToJson(*four)["cores"], 4);
  EXPECT_TRUE(
      ParseJobSpec({{"hlo", {{"text", Testdata("data_parallel_step.hlo")}}}, {"cores", 4}}).ok());
  EXPECT_EQ(
      Error({{"hlo", {{"text", Testdata("data_parallel_step.hlo")}}}, {"cores", 2}}).message(),
      "cores (2) must equal the module's replica_count x num_partitions (4), or be left out");
  Result<JobSpec> replicas = ParseJobSpec({{"hlo", {{"text", kDense}}}, {"cores", 3}});
  ASSERT_TRUE(replicas.ok());
  EXPECT_EQ(replicas->hlo->devices(), 3);  // the module runs as 3 replicas
}

TEST(HloJobSpec, ErrorsNameTheFieldTheLineOrTheLimit) {
  EXPECT_EQ(
      Error({{"hlo", {{"text", "HloModule m\nENTRY e {\n  x = f32[2] parameter(0\n}"}}}}).message(),
      "hlo.text: HLO text line 4, column 1: expected ')' after the parameter number, found '}'");
  EXPECT_EQ(Error({{"hlo", {{"txt", kDense}}}}).message(),
            "hlo.txt is not a known field (text, params, distinctPerDevice, estimateOnly, "
            "allowUnsupported)");
  EXPECT_EQ(Error({{"hlo", {{"text", ""}}}}).message(),
            "hlo.text must be the module's HLO text or StableHLO");
  EXPECT_EQ(Error({{"hlo", {{"text", kDense}}}, {"program", json::object()}}).message(),
            "exactly one of workload, program and hlo must be set");
  EXPECT_EQ(Error({{"hlo", {{"text", kDense}, {"allowUnsupported", true}}}}).message(),
            "hlo.allowUnsupported applies to hlo.estimateOnly jobs (a run must execute every "
            "instruction)");
  EXPECT_EQ(Error({{"hlo", {{"text", kDense}, {"params", {{"2", 1}}}}}}).message(),
            "hlo.params.2 is not a parameter number of the entry computation (it has 2)");
  EXPECT_EQ(Error({{"hlo", {{"text", kDense}, {"params", {{"0", {1, 2}}}}}}}).message(),
            "hlo.params.0 has 2 values; f32[8,16] takes 1 or 128");
  EXPECT_EQ(Error({{"hlo", {{"text", kDense}, {"params", {{"0", "x"}}}}}}).message(),
            "hlo.params.0 must be a number or an array of numbers");

  JobLimits small;
  small.max_hlo_text_bytes = 100;
  EXPECT_THAT(Error({{"hlo", {{"text", kDense}}}}, small).message(),
              HasSubstr("hlo.text is " + std::to_string(std::string(kDense).size()) +
                        " bytes, above the limit max_hlo_text_bytes = 100"));
  small = {};
  small.max_hlo_instructions = 1;
  EXPECT_THAT(Error({{"hlo", {{"text", kDense}}}}, small).message(),
              HasSubstr("more instructions than the limit max_instructions = 1"));
  small = {};
  small.max_tensor_elements = 100;
  EXPECT_THAT(Error({{"hlo", {{"text", kDense}}}}, small).message(),
              HasSubstr("f32[8,16] has 128 elements, more than the limit of 100; set "
                        "hlo.estimateOnly to price the module without running it"));
  EXPECT_TRUE(ParseJobSpec({{"hlo", {{"text", kDense}, {"estimateOnly", true}}}}, small).ok());
}

constexpr const char* kCustomCall = R"(HloModule cc
ENTRY e {
  x = f32[8] parameter(0)
  ROOT y = f32[8] custom-call(x), custom_call_target="my_kernel"
}
)";

TEST(HloJobSpec, AnUnsupportedInstructionIsRejectedForARun) {
  Status s = Error({{"hlo", {{"text", kCustomCall}}}});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("%y (line 4): custom-call target \"my_kernel\""));
  EXPECT_THAT(s.message(), HasSubstr("set hlo.estimateOnly"));
  Result<JobSpec> estimate =
      ParseJobSpec({{"hlo", {{"text", kCustomCall}, {"estimateOnly", true}}}});
  ASSERT_TRUE(estimate.ok());
  // Estimate-only still needs allowUnsupported: the node check prices it.
  const engine::AcceleratorType v4 = engine::FindAcceleratorType("v4-8").value();
  Status priced = PriceHloJobOnNode(*estimate->hlo, v4, engine::Precision::kDefault).status();
  EXPECT_THAT(priced.message(), HasSubstr("my_kernel"));
  Result<JobSpec> allowed = ParseJobSpec(
      {{"hlo", {{"text", kCustomCall}, {"estimateOnly", true}, {"allowUnsupported", true}}}});
  ASSERT_TRUE(allowed.ok());
  EXPECT_TRUE(PriceHloJobOnNode(*allowed->hlo, v4, engine::Precision::kDefault).ok());
}

TEST(HloJobSpec, TheNodeMustHoldTheDevices) {
  Result<JobSpec> spec = ParseJobSpec({{"hlo", {{"text", Testdata("data_parallel_step.hlo")}}}});
  ASSERT_TRUE(spec.ok());
  auto check = [&](const char* type) {
    return PriceHloJobOnNode(*spec->hlo, engine::FindAcceleratorType(type).value(),
                             engine::Precision::kDefault)
        .status();
  };
  EXPECT_TRUE(check("v4-8").ok());  // 4 chips of 2 TensorCores
  EXPECT_TRUE(check("v5litepod-4").ok());
  Status s = check("v5litepod-1");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("hlo: the module runs on 4 devices"));
  EXPECT_THAT(s.message(), HasSubstr("v5litepod-1 has 1"));
}

// The job_spec_fuzzer's HLO seeds (tests/fuzz/corpus/job_spec_fuzzer/hlo_*.json) do what their
// names say, so the fuzzer starts from both sides of the parser: the bad ones fail, the others
// parse and round-trip through the canonical JSON as the fuzzer checks.
TEST(HloJobSpec, TheFuzzSeedsParseAsNamed) {
  int seeds = 0;
  for (const auto& entry : std::filesystem::directory_iterator(TPUEMU_JOB_SPEC_CORPUS)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("hlo_", 0) != 0) continue;
    ++seeds;
    std::ifstream in(entry.path());
    const json body = json::parse(in);
    Result<JobSpec> spec = ParseJobSpec(body);
    const bool bad =
        name.find("bad") != std::string::npos || name.find("error") != std::string::npos;
    ASSERT_EQ(spec.ok(), !bad) << name << ": " << spec.status().ToString();
    if (bad) continue;
    json canonical = JobSpecToJson(*spec);
    canonical["requestId"] = spec->request_id;
    Result<JobSpec> again = ParseJobSpec(canonical);
    ASSERT_TRUE(again.ok()) << name << ": " << again.status().ToString();
    EXPECT_EQ(JobSpecHash(*again), JobSpecHash(*spec)) << name;
  }
  EXPECT_GE(seeds, 4);
}

class HloRunnerTest : public ::testing::Test {
 protected:
  std::unique_ptr<db::Store> store_ = db::Store::Open(":memory:").value();
  JobRecords records_{*store_};
  engine::Slice slice_ = engine::Slice::FromAcceleratorType("v4-8").value();
};

TEST_F(HloRunnerTest, EstimateOnlyPricesWithoutRunning) {
  Result<JobSpec> spec = ParseJobSpec({{"hlo", {{"text", kDense}, {"estimateOnly", true}}}});
  ASSERT_TRUE(spec.ok());
  // No job row: the profile write fails and only loses the early view.
  Result<HloJobEnd> end = RunHloJob(records_, "j", *spec, slice_, {});
  ASSERT_TRUE(end.ok()) << end.status().ToString();
  const json& e = end->result["estimate"];
  EXPECT_EQ(e["module"], "jit_dense");
  EXPECT_EQ(e["devices"], 1);
  EXPECT_EQ(e["tensorcoresPerDevice"], 2);
  EXPECT_GT(e["cyclesPerStep"].get<int64_t>(), 0);
  EXPECT_DOUBLE_EQ(e["flopsPerStep"].get<double>(), 2.0 * 8 * 4 * 16);
  EXPECT_EQ(e["fits"], true);
  EXPECT_EQ(end->result["metrics"]["steps"], 0);
  EXPECT_EQ(end->result["metrics"]["estimateOnly"], true);
  EXPECT_FALSE(end->result.contains("outputs"));
  EXPECT_THAT(end->reason, HasSubstr("estimated without running: "));
  EXPECT_THAT(end->reason, HasSubstr("(fits)"));
  const json& ops = end->result["profile"]["ops"];
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0]["id"], "%dot.1");
  EXPECT_EQ(ops[0]["op"], "dot");
  EXPECT_EQ(ops[0]["opName"], "jit(dense)/dot_general");
  EXPECT_EQ(ops[0]["unit"], "mxu");
  EXPECT_EQ(ops[0]["cycles"], e["cyclesPerStep"]);
}

TEST_F(HloRunnerTest, ACancelledRunStopsBeforeItsFirstStep) {
  Result<JobSpec> spec = ParseJobSpec({{"hlo", {{"text", kDense}}}, {"steps", 3}});
  ASSERT_TRUE(spec.ok());
  std::atomic<bool> cancel{true};
  engine::ParallelContext parallel;
  parallel.cancel.flag = &cancel;
  Result<HloJobEnd> end = RunHloJob(records_, "j", *spec, slice_, parallel);
  EXPECT_EQ(end.status().code(), StatusCode::kCancelled);
}

// The price made at submit (PriceHloJobOnNode) is the run's: not made again for the profile,
// nor for the steps when the module's counts are exact. A doctored price shows it is the one used.
TEST_F(HloRunnerTest, TheRunUsesThePriceMadeAtSubmit) {
  Result<JobSpec> spec = ParseJobSpec({{"hlo", {{"text", kDense}}}, {"steps", 2}});
  ASSERT_TRUE(spec.ok());
  Result<std::shared_ptr<const HloPrice>> price =
      PriceHloJobOnNode(*spec->hlo, slice_.type(), spec->precision);
  ASSERT_TRUE(price.ok()) << price.status().ToString();
  ASSERT_TRUE((*price)->cost.counts_exact);
  auto doctored = std::make_shared<HloPrice>(**price);
  doctored->cost.cycles = 777;
  doctored->cost.rows.at(0).cycles = 777;
  spec->hlo_price = doctored;
  Job job;
  job.project = "p";
  job.zone = "z";
  job.node_id = "n";
  job.job_id = "j";
  job.name = job.NodeName() + "/jobs/j";
  job.spec_hash = "h";
  job.create_time = "2026-01-01T00:00:00.000000Z";
  bool inserted = false;
  ASSERT_TRUE(records_.InsertOrReplay(job, &inserted).ok());  // steps are rows of a running job
  ClaimResult claimed;
  ASSERT_TRUE(records_.Claim(job.name, &claimed).ok());
  Result<HloJobEnd> end = RunHloJob(records_, job.name, *spec, slice_, {});
  ASSERT_TRUE(end.ok()) << end.status().ToString();
  EXPECT_EQ(end->result["profile"]["ops"][0]["cycles"], 777);
  EXPECT_EQ(end->result["metrics"]["cyclesPerStep"], 777);  // the steps were not priced again

  // Without one (a job recovered after a restart) the run prices the module itself.
  spec->hlo_price = nullptr;
  Result<HloJobEnd> own = RunHloJob(records_, job.name, *spec, slice_, {});
  ASSERT_TRUE(own.ok()) << own.status().ToString();
  EXPECT_EQ(own->result["profile"]["ops"][0]["cycles"], (*price)->cost.rows[0].cycles);
}

}  // namespace
}  // namespace tpuemu::service
