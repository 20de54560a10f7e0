// tpuctl jobs against a live tpuemud: submit --wait streams the log and exits with the job's
// code (SUCCEEDED 0, FAILED 1, TIMED_OUT 124, CANCELLED 130); list/describe/logs/wait/cancel/
// delete; an HLO module file (--hlo); usage and API errors.
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "tests/cli/tpuctl/tpuctl_fixture.h"

namespace tpuemu::testing {
namespace {

using nlohmann::json;

class TpuctlJobsTest : public TpuctlTest {
 protected:
  void SetUp() override {
    TpuctlTest::SetUp();
    ProcessResult r = CreateNode("my-tpu");
    ASSERT_EQ(r.exit_code, 0) << Describe(r);
  }
  std::vector<std::string> Submit(std::initializer_list<std::string> rest) {
    std::vector<std::string> args = {"jobs", "submit", "--node", "my-tpu", "--zone", kZone};
    args.insert(args.end(), rest);
    return args;
  }
  std::string StateOf(const std::string& job) {
    return Tpuctl({"jobs", "describe", job, "--node", "my-tpu", "--zone", kZone, "--format",
                   "value(state)"})
        .out;
  }
  std::string TempFile(const std::string& name, const json& content) {
    std::string path = ::testing::TempDir() + "/" + name;
    std::ofstream(path) << content.dump();
    return path;
  }
};

TEST_F(TpuctlJobsTest, SubmitWaitSucceededStreamsTheLogAndExits0) {
  ProcessResult r =
      Tpuctl(Submit({"--workload", "mlp", "--steps", "5", "--batch", "16", "--labels", "ci=yes",
                     "--job-id", "train-1", "--max-retries", "2", "--wait"}));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_NE(r.out.find("step 0 loss="), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("step 4 loss="), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("step 5 "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("SUCCEEDED"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("Job [train-1] SUCCEEDED."), std::string::npos) << r.err;
  // Each log line printed once, in order.
  EXPECT_LT(r.out.find("step 0 "), r.out.find("step 1 "));
  EXPECT_EQ(r.out.find("step 1 "), r.out.rfind("step 1 "));

  json job = TpuctlJson(
      {"jobs", "describe", "train-1", "--node", "my-tpu", "--zone", kZone, "--format", "json"});
  EXPECT_EQ(job["state"], "SUCCEEDED");
  EXPECT_EQ(job["exitCode"], 0);
  EXPECT_EQ(job["labels"]["ci"], "yes");
  EXPECT_EQ(job["spec"]["workload"]["mlp"]["steps"], 5);
  EXPECT_EQ(job["spec"]["workload"]["mlp"]["batch"], 16);
  EXPECT_EQ(job["maxRetries"], 2);
  EXPECT_EQ(job["attempt"], 1);
  ProcessResult too_many = Tpuctl(Submit({"--workload", "matmul", "--max-retries", "11"}));
  EXPECT_EQ(too_many.exit_code, 3) << Describe(too_many);
  EXPECT_NE(too_many.err.find("maxRetries must be 0..10"), std::string::npos) << too_many.err;

  ProcessResult logs = Tpuctl({"jobs", "logs", "train-1", "--node", "my-tpu", "--zone", kZone});
  EXPECT_EQ(logs.exit_code, 0);
  EXPECT_NE(logs.out.find("step 4 loss="), std::string::npos) << logs.out;
  ProcessResult wait = Tpuctl({"jobs", "wait", "train-1", "--node", "my-tpu", "--zone", kZone});
  EXPECT_EQ(wait.exit_code, 0) << Describe(wait);

  ProcessResult list = Tpuctl({"jobs", "list", "--zone", kZone, "--filter", "labels.ci=yes",
                               "--format", "value(jobId,state,exitCode)"});
  EXPECT_EQ(list.out, "train-1\tSUCCEEDED\t0\n") << Describe(list);
  ProcessResult table = Tpuctl({"jobs", "list", "--zone", kZone, "--node", "my-tpu"});
  EXPECT_EQ(table.out.rfind("JOB_ID   NODE    STATE      EXIT_CODE", 0), 0u) << table.out;

  ProcessResult del = Tpuctl({"jobs", "delete", "train-1", "--node", "my-tpu", "--zone", kZone});
  EXPECT_EQ(del.exit_code, 0) << Describe(del);
  ProcessResult gone = Tpuctl({"jobs", "describe", "train-1", "--node", "my-tpu", "--zone", kZone});
  EXPECT_EQ(gone.exit_code, 3);
  EXPECT_NE(gone.err.find("ERROR: (tpuctl) NOT_FOUND: "), std::string::npos) << gone.err;
}

TEST_F(TpuctlJobsTest, SubmitWithoutWaitPrintsTheJobWhenAsked) {
  ProcessResult r = Tpuctl(Submit({"--workload", "matmul", "--m", "64", "--n", "32", "--k", "16",
                                   "--precision", "highest", "--format", "value(name)"}));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  std::string name = r.out.substr(0, r.out.size() - 1);
  EXPECT_EQ(name.rfind("projects/my-proj/locations/us-central2-b/nodes/my-tpu/jobs/", 0), 0u);
  ProcessResult wait = Tpuctl({"jobs", "wait", name, "--format", "json"});  // full name form
  ASSERT_EQ(wait.exit_code, 0) << Describe(wait);
  json job = json::parse(wait.out);
  EXPECT_EQ(job["spec"]["workload"]["matmul"]["m"], 64);
  EXPECT_EQ(job["spec"]["precision"], "HIGHEST");
}

TEST_F(TpuctlJobsTest, ProgramAndSpecFiles) {
  json program = {{"name", "tiny"},
                  {"ops",
                   {{{"id", "x"}, {"op", "parameter"}, {"shape", {8, 16}}, {"fill", 1.0}},
                    {{"id", "w"}, {"op", "parameter"}, {"shape", {16, 4}}, {"fill", 0.5}},
                    {{"id", "y"}, {"op", "dot"}, {"inputs", {"x", "w"}}}}},
                  {"outputs", {"y"}}};
  ProcessResult r =
      Tpuctl(Submit({"--program", TempFile("tiny.json", program), "--steps", "2", "--wait"}));
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  json spec = {{"workload", {{"matmul", {{"m", 16}}}}}, {"priority", 5}};
  ProcessResult s = Tpuctl(Submit(
      {"--spec", TempFile("spec.json", spec), "--wait", "--format", "value(state,priority)"}));
  EXPECT_EQ(s.exit_code, 0) << Describe(s);
  EXPECT_EQ(s.out, "SUCCEEDED\t5\n");
}

// --hlo sends the file's text as hlo.text; --estimate-only prices it without running; a syntax
// error comes back as the service's INVALID_ARGUMENT naming the line and column.
TEST_F(TpuctlJobsTest, HloModuleFile) {
  const std::string path = ::testing::TempDir() + "/dense.hlo";
  const std::string text = R"(HloModule jit_dense
ENTRY main {
  x = f32[8,16]{1,0} parameter(0)
  w = f32[16,4]{1,0} parameter(1)
  ROOT y = f32[8,4]{1,0} dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, metadata={op_name="jit(dense)/dot_general"}
}
)";
  std::ofstream(path) << text;
  ProcessResult r =
      Tpuctl(Submit({"--hlo", path, "--steps", "2", "--seed", "3", "--job-id", "hlo-1", "--wait"}));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_NE(r.out.find("hlo: module jit_dense, 3 instructions on 1 device(s) of v4-8"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("step 1 "), std::string::npos) << r.out;
  json job = TpuctlJson(
      {"jobs", "describe", "hlo-1", "--node", "my-tpu", "--zone", kZone, "--format", "json"});
  EXPECT_EQ(job["spec"]["hlo"]["text"], text);
  EXPECT_EQ(job["spec"]["seed"], 3);
  EXPECT_EQ(job["result"]["outputs"]["out_0"]["shape"], json({8, 4}));

  ProcessResult estimate = Tpuctl(Submit({"--hlo", path, "--estimate-only", "--wait", "--format",
                                          "value(state,result.estimate.fits)"}));
  EXPECT_EQ(estimate.exit_code, 0) << Describe(estimate);
  EXPECT_EQ(estimate.out, "SUCCEEDED\tTrue\n") << Describe(estimate);

  std::ofstream(path) << "HloModule m\nENTRY e {\n  x = f32[2] parameter(0\n}\n";
  ProcessResult bad = Tpuctl(Submit({"--hlo", path}));
  EXPECT_EQ(bad.exit_code, 3) << Describe(bad);
  EXPECT_NE(bad.err.find("INVALID_ARGUMENT: hlo.text: HLO text line 4, column 1: expected ')'"),
            std::string::npos)
      << bad.err;
  ProcessResult alone = Tpuctl(Submit({"--workload", "mlp", "--estimate-only"}));
  EXPECT_EQ(alone.exit_code, 2);
  EXPECT_NE(alone.err.find("--estimate-only and --allow-unsupported apply to --hlo only"),
            std::string::npos)
      << alone.err;
}

TEST_F(TpuctlJobsTest, FailedJobExits1WithTheReason) {
  // 160 f32 parameters of 4096x4096 (10 GiB) overflow a v2-8 TensorCore's HBM; the compiler's
  // HBM accounting fails the job before anything is allocated.
  ProcessResult small =
      Tpuctl({"compute", "tpus", "tpu-vm", "create", "small", "--zone", "us-central1-b",
              "--accelerator-type", "v2-8", "--version", "tpu-ubuntu2204-base"});
  ASSERT_EQ(small.exit_code, 0) << Describe(small);
  json program = {{"name", "big"}, {"ops", json::array()}, {"outputs", {"p0"}}};
  for (int i = 0; i < 160; ++i) {
    program["ops"].push_back({{"id", "p" + std::to_string(i)},
                              {"op", "parameter"},
                              {"shape", {4096, 4096}},
                              {"fill", 1.0}});
  }
  ProcessResult r = Tpuctl({"jobs", "submit", "--node", "small", "--zone", "us-central1-b",
                            "--program", TempFile("big.json", program), "--wait"});
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_NE(r.err.find("] FAILED (exit 1): "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("Ran out of memory in memory space hbm"), std::string::npos) << r.err;
}

TEST_F(TpuctlJobsTest, TimedOutJobExits124) {
  ProcessResult r =
      Tpuctl(Submit({"--workload", "mlp", "--layers", "4", "--batch", "256", "--hidden", "512",
                     "--steps", "10000", "--timeout", "1s", "--wait"}));
  EXPECT_EQ(r.exit_code, 124) << Describe(r);
  EXPECT_NE(r.err.find("TIMED_OUT (exit 124)"), std::string::npos) << r.err;
}

TEST_F(TpuctlJobsTest, CancelledJobExits130) {
  ChildProcess waiter;
  ASSERT_TRUE(waiter.Start(
      {TPUCTL_BIN,   "jobs",    "submit",   "--node",   "my-tpu",  "--zone", kZone,
       "--workload", "mlp",     "--layers", "4",        "--batch", "256",    "--hidden",
       "512",        "--steps", "10000",    "--job-id", "long",    "--wait"},
      Env()));
  ASSERT_TRUE(WaitFor([&] { return StateOf("long") == "RUNNING\n"; }, std::chrono::seconds(30)));
  ProcessResult cancel = Tpuctl({"jobs", "cancel", "long", "--node", "my-tpu", "--zone", kZone});
  EXPECT_EQ(cancel.exit_code, 0) << Describe(cancel);
  ProcessResult r = waiter.Finish();
  EXPECT_EQ(r.exit_code, 130) << Describe(r);
  EXPECT_NE(r.out.find("running (attempt 1)"), std::string::npos) << r.out;  // streamed
  EXPECT_NE(r.err.find("CANCELLED (exit 130)"), std::string::npos) << r.err;
  ProcessResult wait = Tpuctl({"jobs", "wait", "long", "--node", "my-tpu", "--zone", kZone});
  EXPECT_EQ(wait.exit_code, 130);
  ProcessResult listed =
      Tpuctl({"jobs", "list", "--zone", kZone, "--state", "CANCELLED", "--format", "value(jobId)"});
  EXPECT_EQ(listed.out, "long\n") << Describe(listed);
}

TEST_F(TpuctlJobsTest, SubmitErrors) {
  ProcessResult none = Tpuctl(Submit({"--wait"}));
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("exactly one of --workload, --program, --spec, --hlo"),
            std::string::npos);
  ProcessResult wrong = Tpuctl(Submit({"--workload", "matmul", "--layers", "2"}));
  EXPECT_EQ(wrong.exit_code, 2);
  EXPECT_NE(wrong.err.find("--layers does not apply to --workload matmul"), std::string::npos);
  ProcessResult timeout = Tpuctl(Submit({"--workload", "mlp", "--timeout", "soon"}));
  EXPECT_EQ(timeout.exit_code, 2);
  ProcessResult file = Tpuctl(Submit({"--program", "/nonexistent/p.json"}));
  EXPECT_EQ(file.exit_code, 2);
  EXPECT_NE(file.err.find("cannot read /nonexistent/p.json"), std::string::npos);
  // The service's validation comes back verbatim.
  ProcessResult big = Tpuctl(Submit({"--workload", "mlp", "--layers", "100"}));
  EXPECT_EQ(big.exit_code, 3);
  EXPECT_NE(big.err.find("ERROR: (tpuctl) INVALID_ARGUMENT: workload.mlp.layers"),
            std::string::npos)
      << big.err;
  ProcessResult no_node =
      Tpuctl({"jobs", "submit", "--node", "ghost", "--zone", kZone, "--workload", "mlp"});
  EXPECT_EQ(no_node.exit_code, 3);
  EXPECT_NE(no_node.err.find("NOT_FOUND"), std::string::npos) << no_node.err;
  ProcessResult no_ref = Tpuctl({"jobs", "describe", "x"});
  EXPECT_EQ(no_ref.exit_code, 2);
}

}  // namespace
}  // namespace tpuemu::testing
