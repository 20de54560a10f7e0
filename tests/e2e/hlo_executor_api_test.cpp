// tpuemud --executor hlo through real HTTP: built-in and program jobs run their steps on the HLO
// evaluator (result.metrics.hostExecutor says so) with the native executor's numbers to float
// noise, and a job's timeout still ends it TIMED_OUT.
#include <gtest/gtest.h>

#include <cmath>

#include "tests/e2e/jobs_api_fixture.h"

namespace tpuemu::testing {
namespace {

using nlohmann::json;

service::JobLimits WithExecutor(service::JobExecutor executor) {
  service::JobLimits limits;
  limits.executor = executor;
  return limits;
}

class HloExecutorApiTest : public JobsApiFixture {
 protected:
  HloExecutorApiTest() : JobsApiFixture(WithExecutor(service::JobExecutor::kHlo)) {}

  // What the same job gives on a second server with the native executor.
  json NativeResult(const std::string& body) {
    if (!native_node_) {
      Result<ClientResponse> r = native_client_.Request(
          "POST", std::string(kParent) + "/nodes?nodeId=tpu-n",
          R"({"acceleratorType": "v4-8", "runtimeVersion": "tpu-ubuntu2204-base"})");
      EXPECT_TRUE(r.ok() && r->status == 200);
      EXPECT_FALSE(WaitOperation(native_client_, r->Json()["name"]).is_null());
      native_node_ = true;
    }
    Result<ClientResponse> submitted =
        native_client_.Request("POST", std::string(kParent) + "/nodes/tpu-n/jobs", body);
    EXPECT_TRUE(submitted.ok() && submitted->status == 200);
    const std::string name = submitted->Json()["name"];
    json job;
    for (int i = 0; i < 30; ++i) {
      job = native_client_.Request("GET", "/v2/" + name + ":wait?timeout=2s")->Json();
      if (job.value("state", "") != "QUEUED" && job.value("state", "") != "RUNNING") break;
    }
    EXPECT_EQ(job["state"], "SUCCEEDED") << job.dump().substr(0, 2000);
    return job["result"];
  }

  ApiServer native_{{.provisioning_delay_ms = 0, .transition_delay_ms = 0},
                    {},
                    {.utilization_interval_ms = 0},
                    WithExecutor(service::JobExecutor::kNative)};
  HttpClient native_client_{"127.0.0.1", native_.port(), std::chrono::seconds(30)};
  bool native_node_ = false;
};

constexpr const char* kJobs[] = {
    R"({"workload": {"mlp": {"layers": 2, "batch": 32, "hidden": 32, "steps": 5}}, "cores": 2})",
    R"({"workload": {"transformer": {"layers": 1, "dModel": 16, "heads": 2, "seqLen": 8,
        "batch": 4, "steps": 3}}})",
    R"({"program": {"name": "p", "ops": [
        {"id": "x", "op": "parameter", "shape": [4, 8], "random": {"seed": 3}},
        {"id": "w", "op": "constant", "shape": [8, 8], "fill": 0.25},
        {"id": "y", "op": "dot", "inputs": ["x", "w"]},
        {"id": "s", "op": "softmax", "inputs": ["y"]},
        {"id": "r", "op": "reduce", "inputs": ["s"], "reduce": "sum", "axes": [1]}],
        "outputs": ["r", "s"]}})"};

TEST_F(HloExecutorApiTest, JobsRunOnTheHloEvaluatorWithTheNativeNumbers) {
  CreateReady("tpu-a");
  for (const char* body : kJobs) {
    SCOPED_TRACE(body);
    const json job = Wait(Submit("tpu-a", body)["name"]);
    ASSERT_EQ(job["state"], "SUCCEEDED") << job.dump().substr(0, 2000);
    const json& result = job["result"];
    EXPECT_EQ(result["metrics"]["hostExecutor"], "hlo");
    const json native = NativeResult(body);
    EXPECT_EQ(native["metrics"]["hostExecutor"], "native");
    // Priced by the same program: the emulated figures are identical.
    EXPECT_EQ(result["metrics"]["cyclesPerStep"], native["metrics"]["cyclesPerStep"]);
    if (native.contains("finalLoss")) {
      const double ours = result["finalLoss"], theirs = native["finalLoss"];
      EXPECT_NEAR(ours, theirs, 1e-5 * std::fabs(theirs));
    }
    ASSERT_EQ(result["outputs"].size(), native["outputs"].size());
    for (const auto& [id, summary] : native["outputs"].items()) {
      const double ours = result["outputs"][id]["checksum"], theirs = summary["checksum"];
      EXPECT_NEAR(ours, theirs, 1e-5 + 1e-5 * std::fabs(theirs)) << id;
    }
  }
}

TEST_F(HloExecutorApiTest, ATimeoutEndsAJobOnTheEvaluator) {
  CreateReady("tpu-a");
  // Thousands of steps of a 4x512 MLP: far longer than the second it may take.
  const json job = Wait(Submit("tpu-a", R"({"workload": {"mlp": {"layers": 4, "batch": 256,
      "hidden": 512, "steps": 10000}}, "timeoutSeconds": 1})")["name"]);
  EXPECT_EQ(job["state"], "TIMED_OUT") << job.dump().substr(0, 2000);
  EXPECT_EQ(job["exitCode"], 124);
}

}  // namespace
}  // namespace tpuemu::testing
