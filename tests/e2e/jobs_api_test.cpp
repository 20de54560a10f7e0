// jobs.* through real HTTP (issue 4 item 6): loss falls, cache hit/miss, HBM overflow, cancel,
// timeout, idempotency, :wait, logs, metrics, errors, and 4 nodes x 10 jobs.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "tests/e2e/jobs_api_fixture.h"

namespace tpuemu::testing {
namespace {

using nlohmann::json;

constexpr char kLong[] =
    R"({"workload": {"mlp": {"layers": 4, "batch": 256, "hidden": 512, "steps": 10000}}})";

class JobsApiTest : public JobsApiFixture {};

TEST_F(JobsApiTest, MlpLossFallsWithLogsAndMetrics) {
  CreateReady("tpu-a");
  json job = Submit("tpu-a", R"({"workload": {"mlp": {"steps": 20, "hidden": 32}},
                                  "labels": {"team": "ml"}})");
  EXPECT_EQ(job["state"], "QUEUED");
  json done = Wait(job["name"]);
  ASSERT_EQ(done["state"], "SUCCEEDED") << done.dump();
  EXPECT_EQ(done["exitCode"], 0);
  json metrics = Call("GET", "/v2/" + job["name"].get<std::string>() + "/metrics").Json();
  ASSERT_EQ(metrics["steps"].size(), 20u);
  EXPECT_LT(metrics["steps"][19]["loss"].get<double>(), metrics["steps"][0]["loss"].get<double>());
  EXPECT_GT(metrics["steps"][0]["emulatedTflops"].get<double>(), 0);
  EXPECT_GT(metrics["summary"]["hbmPeakBytesPerTensorCore"].get<int64_t>(), 0);
  json logs = Call("GET", "/v2/" + job["name"].get<std::string>() + "/logs?offset=1").Json();
  ASSERT_FALSE(logs["lines"].empty());
  bool has_compile = false;
  for (const auto& l : logs["lines"]) has_compile |= l.get<std::string>().starts_with("compile:");
  EXPECT_TRUE(has_compile) << logs.dump();
  json listed = Call("GET", "/v2/projects/proj/locations/-/jobs?label=team=ml").Json();
  ASSERT_EQ(listed["jobs"].size(), 1u);
  EXPECT_EQ(listed["jobs"][0]["name"], job["name"]);
}

TEST_F(JobsApiTest, TransformerTrainsWithFallingLossAndAPerOpProfile) {
  CreateReady("tpu-a");
  json job = Submit("tpu-a", R"({"workload": {"transformer": {"layers": 2, "dModel": 16,
                                  "heads": 2, "seqLen": 8, "batch": 4, "steps": 15}}})");
  const std::string name = job["name"];
  json done = Wait(name);
  ASSERT_EQ(done["state"], "SUCCEEDED") << done.dump();
  EXPECT_FALSE(done["result"].contains("profile"));  // served by .../metrics only
  EXPECT_LT(done["result"]["finalLoss"].get<double>(), 1.0);
  json metrics = Call("GET", "/v2/" + name + "/metrics").Json();
  ASSERT_EQ(metrics["steps"].size(), 15u) << metrics.dump().substr(0, 500);
  const json& steps = metrics["steps"];
  EXPECT_LT(steps[14]["loss"].get<double>(), 0.8 * steps[0]["loss"].get<double>());
  for (const char* field : {"cycles", "emulatedSeconds", "mxuUtilization", "flops",
                            "emulatedTflops", "hbmPeakBytes", "hostSeconds"}) {
    EXPECT_TRUE(steps[0].contains(field)) << field;
  }
  EXPECT_EQ(steps[0]["hbmPeakBytes"], metrics["summary"]["hbmPeakBytesPerTensorCore"]);
  // One step's per-op profile: exactly the documented fields; attention on the MXU, softmax on
  // the vector unit; the ops' cycles add up to the step's.
  const json& ops = metrics["ops"];
  ASSERT_GT(ops.size(), 50u);
  int64_t cycles = 0;
  double flops = 0;
  std::map<std::string, std::string> unit;
  for (const json& op : ops) {
    std::set<std::string> keys;
    for (auto it = op.begin(); it != op.end(); ++it) keys.insert(it.key());
    EXPECT_EQ(keys, (std::set<std::string>{"id", "op", "unit", "cycles", "emulatedSeconds", "flops",
                                           "mxuUtilization", "hbmBytes"}))
        << op.dump();
    cycles += op["cycles"].get<int64_t>();
    flops += op["flops"].get<double>();
    unit[op["id"]] = op["unit"];
  }
  EXPECT_EQ(unit["l0.scores"], "mxu");
  EXPECT_EQ(unit["l1.ctxh"], "mxu");
  EXPECT_EQ(unit["l0.probs"], "vpu");
  EXPECT_EQ(unit["l1.gelu"], "vpu");
  EXPECT_EQ(cycles, steps[0]["cycles"].get<int64_t>());
  EXPECT_DOUBLE_EQ(flops, steps[0]["flops"].get<double>());

  json bad = Submit("tpu-a", R"({"workload": {"transformer": {"dModel": 30, "heads": 4}}})", 400);
  EXPECT_EQ(bad["error"]["message"], "workload.transformer.heads must divide dModel (30)");
}

// A :wait answered by the job's end must let go of its connection: before the fix its pending
// timeout timer held the session (and tpuemud's shutdown drain) for the whole `timeout`.
TEST_F(JobsApiTest, WaitAnsweredEarlyReleasesItsConnection) {
  CreateReady("tpu-a");
  const std::string name = Submit("tpu-a", R"({"workload": {"matmul": {"m": 8}}})")["name"];
  {
    HttpClient waiter("127.0.0.1", server_.port(), std::chrono::seconds(30));
    Result<ClientResponse> r = waiter.Request("GET", "/v2/" + name + ":wait?timeout=600s");
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->Json()["state"], "SUCCEEDED");
  }  // closes its connection
  // Only client_'s keep-alive connection may remain.
  EXPECT_TRUE(WaitFor([&] { return server_.active_connections() <= 1; }))
      << server_.active_connections() << " connections still open";
}

TEST_F(JobsApiTest, ShapeChangeRecompilesAndRepeatHitsTheCache) {
  CreateReady("tpu-a");
  auto hit = [&](const char* body) {
    json done = Wait(Submit("tpu-a", body)["name"]);
    EXPECT_EQ(done["state"], "SUCCEEDED") << done.dump();
    return done["result"]["metrics"]["compileCacheHit"].get<bool>();
  };
  EXPECT_FALSE(hit(R"({"workload": {"matmul": {"m": 96, "n": 32, "k": 16}}})"));
  EXPECT_TRUE(hit(R"({"workload": {"matmul": {"m": 96, "n": 32, "k": 16}}})"));
  EXPECT_FALSE(hit(R"({"workload": {"matmul": {"m": 96, "n": 32, "k": 48}}})"));
}

TEST_F(JobsApiTest, HbmOverflowFailsWithTheXlaReason) {
  CreateReady("small", "/v2/projects/proj/locations/us-central1-b", "v2-8");
  json program = {{"name", "big"}, {"ops", json::array()}, {"outputs", {"p0"}}};
  for (int i = 0; i < 160; ++i) {
    program["ops"].push_back({{"id", "p" + std::to_string(i)},
                              {"op", "parameter"},
                              {"shape", {4096, 4096}},
                              {"fill", 1.0}});
  }
  ClientResponse r = Call("POST", "/v2/projects/proj/locations/us-central1-b/nodes/small/jobs",
                          json{{"program", program}}.dump());
  ASSERT_EQ(r.status, 200) << r.body.substr(0, 300);
  json done = Wait(r.Json()["name"]);
  EXPECT_EQ(done["state"], "FAILED");
  EXPECT_EQ(done["exitCode"], 1);
  EXPECT_NE(done["reason"].get<std::string>().find("Ran out of memory in memory space hbm"),
            std::string::npos)
      << done["reason"];
}

TEST_F(JobsApiTest, CancelTimeoutIdempotencyAndErrors) {
  CreateReady("tpu-a");
  CreateReady("tpu-b");
  json running = Submit("tpu-a", kLong);
  ASSERT_TRUE(WaitFor([&] { return StateIs(running["name"], "RUNNING"); }));
  const std::string cancel = "/v2/" + running["name"].get<std::string>() + ":cancel";
  EXPECT_EQ(Call("POST", cancel).status, 200);
  json cancelled = Wait(running["name"]);
  EXPECT_EQ(cancelled["state"], "CANCELLED");
  EXPECT_EQ(cancelled["exitCode"], 130);
  json again = Call("POST", cancel).Json();  // idempotent
  EXPECT_EQ(again["state"], "CANCELLED");

  std::string timed = kLong;
  timed.insert(timed.size() - 1, R"(, "timeoutSeconds": 1)");
  json timed_out = Wait(Submit("tpu-b", timed)["name"]);
  EXPECT_EQ(timed_out["state"], "TIMED_OUT");
  EXPECT_EQ(timed_out["exitCode"], 124);

  const char* body = R"({"workload": {"matmul": {"m": 8}}, "requestId": "req-1"})";
  json first = Submit("tpu-a", body);
  json second = Submit("tpu-a", body);
  EXPECT_EQ(first["name"], second["name"]);
  json conflict =
      Submit("tpu-a", R"({"workload": {"matmul": {"m": 9}}, "requestId": "req-1"})", 409);
  EXPECT_EQ(conflict["error"]["status"], "ALREADY_EXISTS");

  json bad = Submit("tpu-a", R"({"workload": {"mlp": {"layers": 65}}})", 400);
  EXPECT_EQ(bad["error"]["message"], "workload.mlp.layers must be 1..64");
  EXPECT_EQ(Submit("nope", body, 404)["error"]["status"], "NOT_FOUND");
  json finished = Wait(first["name"]);
  EXPECT_EQ(Call("DELETE", "/v2/" + finished["name"].get<std::string>()).status, 200);
  EXPECT_EQ(Call("GET", "/v2/" + finished["name"].get<std::string>()).status, 404);
}

// Issue 26: a queued job's cancel is committed before the reply, whatever the engine does — here
// both engine threads run other nodes' long jobs, and the reply already says CANCELLED (130), as
// does every read after it.
TEST_F(JobsApiTest, CancelOfAQueuedJobIsCancelledInItsReplyWhileThePoolIsBusy) {
  CreateReady("tpu-a");
  CreateReady("tpu-b");
  const std::string long_a = Submit("tpu-a", kLong)["name"];
  const std::string long_b = Submit("tpu-b", kLong)["name"];
  ASSERT_TRUE(WaitFor([&] { return StateIs(long_a, "RUNNING") && StateIs(long_b, "RUNNING"); }));
  const std::string queued = Submit("tpu-a", R"({"workload": {"matmul": {"m": 8}}})")["name"];
  ASSERT_TRUE(StateIs(queued, "QUEUED"));
  ClientResponse reply = Call("POST", "/v2/" + queued + ":cancel");
  ASSERT_EQ(reply.status, 200) << reply.body;
  EXPECT_EQ(reply.Json()["state"], "CANCELLED") << reply.body;
  EXPECT_EQ(reply.Json()["exitCode"], 130);
  EXPECT_EQ(reply.Json()["reason"], "cancelled by the user");
  json read = Call("GET", "/v2/" + queued).Json();
  EXPECT_EQ(read["state"], "CANCELLED");
  EXPECT_TRUE(read.contains("endTime"));
  json logs = Call("GET", "/v2/" + queued + "/logs").Json();
  ASSERT_FALSE(logs["lines"].empty());
  EXPECT_NE(logs["lines"].back().get<std::string>().find("CANCELLED"), std::string::npos)
      << logs.dump();
  EXPECT_TRUE(StateIs(long_a, "RUNNING"));  // the running jobs go on
  for (const std::string& name : {long_a, long_b}) {
    EXPECT_EQ(Call("POST", "/v2/" + name + ":cancel").status, 200);
    EXPECT_EQ(Wait(name)["state"], "CANCELLED");
  }
}

TEST_F(JobsApiTest, FourNodesTenJobsEachReachAConsistentTerminalState) {
  std::vector<std::string> nodes{"n1", "n2", "n3", "n4"};
  for (const std::string& n : nodes) CreateReady(n);
  std::vector<std::string> names;
  for (int j = 0; j < 10; ++j) {
    for (const std::string& n : nodes) {
      std::string body = R"({"workload": {"matmul": {"m": 64, "n": 64, "k": 64}}, "steps": 2,
                             "priority": )" +
                         std::to_string(j % 3) + "}";
      names.push_back(Submit(n, body)["name"]);
    }
  }
  // Cancel one queued-or-running job per node: every job still ends in exactly one terminal state.
  for (int i = 0; i < 4; ++i) Call("POST", "/v2/" + names[36 + i] + ":cancel");
  int succeeded = 0, cancelled = 0;
  for (const std::string& name : names) {
    json done = Wait(name);
    const std::string state = done["state"];
    succeeded += state == "SUCCEEDED";
    cancelled += state == "CANCELLED";
    if (state == "SUCCEEDED") {
      EXPECT_EQ(done["exitCode"], 0);
      json metrics = Call("GET", "/v2/" + name + "/metrics").Json();
      EXPECT_EQ(metrics["steps"].size(), 2u) << name;
    }
  }
  EXPECT_EQ(succeeded + cancelled, 40);
  json page = Call("GET", "/v2/projects/proj/locations/us-central2-b/jobs?pageSize=25").Json();
  EXPECT_EQ(page["jobs"].size(), 25u);
  ASSERT_TRUE(page.contains("nextPageToken"));
  json rest = Call("GET", "/v2/projects/proj/locations/us-central2-b/jobs?pageToken=" +
                              page["nextPageToken"].get<std::string>())
                  .Json();
  EXPECT_EQ(rest["jobs"].size(), 15u);
}

// A job's JSON is written from the stored text without parsing the spec again; every body must
// still be exactly what nlohmann::json dumps (keys in order, compact), in every state and in lists.
TEST_F(JobsApiTest, JobBodiesAreCompactJsonWithSortedKeysAndStateFiltersWork) {
  CreateReady("tpu-a");
  auto expect_canonical = [](const ClientResponse& r) {
    EXPECT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.body, json::parse(r.body).dump()) << r.body;
  };
  const std::string jobs = std::string(kParent) + "/nodes/tpu-a/jobs";
  ClientResponse submitted =
      Call("POST", jobs + "?jobId=j1",
           R"({"workload": {"mlp": {"steps": 2, "learningRate": 0.25}}, "priority": 2,
               "labels": {"team": "ml", "q": "a\"b"}, "requestId": "r-1"})");
  expect_canonical(submitted);
  const std::string name = submitted.Json()["name"];
  EXPECT_EQ(Wait(name)["state"], "SUCCEEDED");
  expect_canonical(Call("GET", "/v2/" + name));
  expect_canonical(Call("GET", "/v2/" + name + ":wait"));
  expect_canonical(Call("GET", jobs + "?pageSize=1"));
  ClientResponse done = Call("GET", jobs + "?state=SUCCEEDED");
  expect_canonical(done);
  EXPECT_EQ(done.Json()["jobs"].size(), 1u);
  EXPECT_EQ(Call("GET", jobs + "?state=QUEUED").Json()["jobs"].size(), 0u);
  ClientResponse unknown = Call("GET", jobs + "?state=PAUSED");  // no job is in it: not an error
  EXPECT_EQ(unknown.body, R"({"jobs":[]})");
  EXPECT_EQ(Call("GET", jobs + "?state=").Json()["jobs"].size(), 1u);  // empty: any state
}

}  // namespace
}  // namespace tpuemu::testing
