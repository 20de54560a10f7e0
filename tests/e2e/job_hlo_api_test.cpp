// GET .../jobs/J/hlo through real HTTP: a workload's or a program's step comes back as an HLO
// module with its values, and an hlo job of it computes the same outputs as the job did; an hlo
// job gives its own module back; a job too large to carry its values gets the text alone.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "tests/e2e/jobs_api_fixture.h"

namespace tpuemu::testing {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

class JobHloApiTest : public JobsApiFixture {
 protected:
  json Done(const std::string& body) {
    json job = Wait(Submit("tpu-a", body)["name"]);
    EXPECT_EQ(job["state"], "SUCCEEDED") << job.dump().substr(0, 2000);
    return job;
  }
  json HloOf(const json& job) {
    ClientResponse r = Call("GET", "/v2/" + job["name"].get<std::string>() + "/hlo");
    EXPECT_EQ(r.status, 200) << r.body.substr(0, 2000);
    return r.Json();
  }
  // The step of `body` (1 step), as an HLO module run by an hlo job, gives the job's outputs.
  void RunsAgainWithTheSameNumbers(const std::string& body);
};

// Both stacks compute in f32 with the same numerics; sums may be taken in another order, so
// each figure is held to a relative 1e-4 (plus 1e-5 absolute for a sum that cancels to ~0).
void ExpectClose(const json& a, const json& b, const std::string& what) {
  const double x = a.get<double>(), y = b.get<double>();
  EXPECT_NEAR(x, y, 1e-5 + 1e-4 * std::fabs(x)) << what;
}

void JobHloApiTest::RunsAgainWithTheSameNumbers(const std::string& body) {
  SCOPED_TRACE(body);
  const json job = Done(body);
  const json hlo = HloOf(job);
  ASSERT_EQ(hlo["valuesIncluded"], true) << hlo.dump().substr(0, 2000);
  EXPECT_THAT(hlo["job"]["hlo"]["text"].get<std::string>(), HasSubstr("HloModule"));
  const json again = Done(hlo["job"].dump());
  ASSERT_EQ(again["state"], "SUCCEEDED");
  const json& native = job["result"]["outputs"];
  const json& ours = again["result"]["outputs"];
  ASSERT_FALSE(native.empty()) << job.dump().substr(0, 2000);
  ASSERT_EQ(native.size(), hlo["outputs"].size()) << hlo["outputs"].dump();
  ASSERT_EQ(ours.size(), hlo["outputs"].size()) << ours.dump();
  for (size_t i = 0; i < hlo["outputs"].size(); ++i) {
    const std::string id = hlo["outputs"][i];
    const json& n = native[id];
    const json& o = ours["out_" + std::to_string(i)];
    EXPECT_EQ(n["shape"], o["shape"]) << id;
    ExpectClose(n["checksum"], o["checksum"], id + " checksum");
    ASSERT_EQ(n["sample"].size(), o["sample"].size()) << id;
    for (size_t k = 0; k < n["sample"].size(); ++k) {
      ExpectClose(n["sample"][k], o["sample"][k], id + " sample " + std::to_string(k));
    }
  }
}

TEST_F(JobHloApiTest, EveryWorkloadsStepRunsAgainAsAnHloJob) {
  CreateReady("tpu-a");
  RunsAgainWithTheSameNumbers(
      R"({"workload": {"matmul": {"m": 16, "n": 8, "k": 32}}, "precision": "HIGHEST"})");
  RunsAgainWithTheSameNumbers(
      R"({"workload": {"mlp": {"layers": 2, "batch": 8, "hidden": 16, "steps": 1}}})");
  RunsAgainWithTheSameNumbers(R"({"workload": {"cnn": {"batch": 4, "channels": 4, "steps": 1}}})");
  RunsAgainWithTheSameNumbers(R"({"workload": {"transformer": {"layers": 1,
      "dModel": 8, "heads": 2, "seqLen": 4, "batch": 2, "steps": 1}}})");
}

// One cost model: a graph job's step is priced as its lowered module, so the module run again as an
// hlo job costs the same cycles. On v2 a JAX device is one TensorCore, as a 1-core job's is.
TEST_F(JobHloApiTest, TheModuleAgainCostsTheJobsCycles) {
  const std::string parent = "/v2/projects/proj/locations/us-central1-b";
  CreateReady("tpu-e", parent, "v2-8");
  for (const char* body :
       {R"({"workload": {"mlp": {"layers": 2, "batch": 64, "hidden": 256, "steps": 1}}})",
        R"({"workload": {"matmul": {"m": 512, "n": 256, "k": 1024}}, "precision": "HIGH"})"}) {
    SCOPED_TRACE(body);
    const json job = Wait(Submit("tpu-e", body, 200, parent)["name"]);
    ASSERT_EQ(job["state"], "SUCCEEDED") << job.dump().substr(0, 2000);
    const json hlo = HloOf(job);
    const json again = Wait(Submit("tpu-e", hlo["job"].dump(), 200, parent)["name"]);
    ASSERT_EQ(again["state"], "SUCCEEDED") << again.dump().substr(0, 2000);
    const json& cycles = job["result"]["metrics"]["cyclesPerStep"];
    ASSERT_GT(cycles.get<int64_t>(), 0) << job["result"].dump().substr(0, 2000);
    EXPECT_EQ(cycles, again["result"]["metrics"]["cyclesPerStep"]) << again["result"].dump();
  }
}

TEST_F(JobHloApiTest, AProgramsInitSpecsBecomeItsParams) {
  CreateReady("tpu-a");
  RunsAgainWithTheSameNumbers(R"({"program": {"name": "p", "ops": [
      {"id": "x", "op": "parameter", "shape": [4, 8], "random": {"seed": 3}},
      {"id": "w", "op": "constant", "shape": [8, 8], "fill": 0.25},
      {"id": "b", "op": "constant", "shape": [8], "values": [1, 2, 3, 4, 5, 6, 7, 8]},
      {"id": "y", "op": "dot", "inputs": ["x", "w"]},
      {"id": "z", "op": "add", "inputs": ["y", "b"]},
      {"id": "s", "op": "softmax", "inputs": ["z"]},
      {"id": "t", "op": "tanh", "inputs": ["s"]},
      {"id": "r", "op": "reduce", "inputs": ["t"], "reduce": "sum", "axes": [1]}],
      "outputs": ["r", "s"]}})");
}

TEST_F(JobHloApiTest, AnHloJobGivesItsOwnModuleBack) {
  CreateReady("tpu-a");
  const std::string text = R"(HloModule m
ENTRY e {
  x = f32[4] parameter(0)
  ROOT n = f32[4] negate(x)
})";
  const json job = Done(json{{"hlo", {{"text", text}, {"params", {{"0", {1, 2, 3, 4}}}}}}}.dump());
  const json hlo = HloOf(job);
  EXPECT_EQ(hlo["job"]["hlo"]["text"], text);
  EXPECT_EQ(hlo["job"]["hlo"]["params"]["0"], json({1, 2, 3, 4}));
}

TEST_F(JobHloApiTest, ALargeJobGetsTheTextAloneAndAnUnknownJobIs404) {
  CreateReady("tpu-a");
  const json job = Done(R"({"workload": {"matmul": {"m": 256, "n": 256, "k": 256}}})");
  const json hlo = HloOf(job);
  EXPECT_EQ(hlo["valuesIncluded"], false);
  EXPECT_THAT(hlo["note"].get<std::string>(), HasSubstr("more than the 16384 a reply carries"));
  EXPECT_EQ(hlo["job"]["hlo"]["params"], json::object());
  EXPECT_THAT(hlo["job"]["hlo"]["text"].get<std::string>(), HasSubstr("dot("));
  // The text alone still runs: the hlo job seeds the parameters.
  const json again = Done(hlo["job"].dump());
  EXPECT_EQ(again["result"]["outputs"]["out_0"]["shape"], json({256, 256}));

  ClientResponse missing = Call("GET", kParent + "/nodes/tpu-a/jobs/nope/hlo");
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(missing.Json()["error"]["status"], "NOT_FOUND");
}

}  // namespace
}  // namespace tpuemu::testing
