// Faults through real HTTP: maintenance events (simulateMaintenanceEvent, performMaintenance, a
// scheduled window, a queued resource's), preemption (on request, at a seeded random rate, of a
// queued resource's spot node), chaos rules, zone capacity at run time, and the events each
// leaves in the feed.
#include <gtest/gtest.h>

#include "tests/e2e/api_paths.h"
#include "tests/e2e/api_test_client.h"
#include "tests/support/sanitizers.h"

namespace tpuemu::testing {
namespace {

using nlohmann::json;

const std::string kEmulator = std::string("/_emulator/projects/proj/locations/") + kZone;

daemon::AppOptions Options(double preemption_rate = 0) {
  return {.nodes = {.provisioning_delay_ms = 0, .transition_delay_ms = 0},
          .queued_resources = {.accept_delay_ms = 0, .transition_delay_ms = 0},
          .faults = {.seed = 7,
                     .preemption_rate_per_hour = preemption_rate,
                     .preemption_sweep_ms = 20,
                     .maintenance_duration_ms = 300},
          .observability = {.utilization_interval_ms = 0}};
}

class FaultsApiTest : public ::testing::Test {
 protected:
  explicit FaultsApiTest(daemon::AppOptions options = Options()) : server_(options) {}

  // A READY node; `scheduling` is its schedulingConfig.
  void CreateNode(const std::string& id, const json& scheduling = json::object(),
                  const std::string& type = "v4-8") {
    json op = api_.Finish(api_.Call("POST", kParent + "/nodes?nodeId=" + id,
                                    json{{"acceleratorType", type},
                                         {"runtimeVersion", "tpu-ubuntu2204-base"},
                                         {"schedulingConfig", scheduling}}));
    ASSERT_TRUE(op.value("done", false));
    ASSERT_FALSE(op.contains("error")) << op.dump();
  }
  std::vector<json> Faults(const std::string& kind) {
    std::vector<json> out;
    json events = api_.Get("/v2/projects/proj/events?since=0&pageSize=500");
    for (const json& e : events["events"]) {
      if (e["kind"] == "fault" && e["state"] == kind) out.push_back(e);
    }
    return out;
  }
  bool WaitFault(const std::string& kind) {
    return WaitFor([&] { return !Faults(kind).empty(); });
  }

  ApiServer server_;
  ApiTestClient api_{server_.port()};
};

TEST_F(FaultsApiTest, SimulatedMaintenanceMakesTheNodeUnhealthyThenHealthyAgain) {
  CreateNode("m1", json::object(), "v4-32");  // 4 workers
  ExpectApiError(api_.Call("POST", kAlphaParent + "/nodes/m1:simulateMaintenanceEvent",
                           json{{"workerIds", {"9"}}}),
                 400, "INVALID_ARGUMENT", "workerIds");
  ClientResponse reply = api_.Call("POST", kAlphaParent + "/nodes/m1:simulateMaintenanceEvent",
                                   json{{"workerIds", {"0", "2"}}});
  ASSERT_EQ(reply.status, 200) << reply.body;
  EXPECT_EQ(reply.Json()["metadata"]["verb"], "simulateMaintenanceEvent");
  json node = api_.Get(kAlphaParent + "/nodes/m1");
  EXPECT_EQ(node["state"], "READY");
  EXPECT_EQ(node["health"], "UNHEALTHY_MAINTENANCE");
  EXPECT_EQ(node["upcomingMaintenance"]["maintenanceStatus"], "ONGOING");
  EXPECT_FALSE(api_.Get(kParent + "/nodes/m1").contains("upcomingMaintenance"));  // v2 has none
  ExpectApiError(api_.Call("POST", kAlphaParent + "/nodes/m1:simulateMaintenanceEvent", "{}"), 400,
                 "FAILED_PRECONDITION", "already under maintenance");
  json done = api_.Finish(reply);
  EXPECT_EQ(done["response"]["@type"], "type.googleapis.com/google.cloud.tpu.v2alpha1.Node");
  json after = api_.Get(kAlphaParent + "/nodes/m1");
  EXPECT_EQ(after["health"], "HEALTHY");
  EXPECT_FALSE(after.contains("upcomingMaintenance"));
  ASSERT_TRUE(WaitFault("MAINTENANCE_ENDED"));
  std::vector<json> started = Faults("MAINTENANCE_STARTED");
  ASSERT_EQ(started.size(), 1u);
  EXPECT_NE(started[0]["message"].get<std::string>().find("workers 0,2"), std::string::npos);
}

TEST_F(FaultsApiTest, ScheduledMaintenanceShowsThenStartsOnItsOwn) {
  CreateNode("m2");
  ClientResponse scheduled = api_.Call("POST", kEmulator + "/nodes/m2:scheduleMaintenance",
                                       json{{"startIn", "0.2s"}, {"canReschedule", true}});
  ASSERT_EQ(scheduled.status, 200) << scheduled.body;
  json upcoming = api_.Get(kAlphaParent + "/nodes/m2")["upcomingMaintenance"];
  EXPECT_EQ(upcoming["type"], "SCHEDULED");
  EXPECT_EQ(upcoming["maintenanceStatus"], "PENDING");
  EXPECT_EQ(upcoming["canReschedule"], true);
  EXPECT_TRUE(upcoming.contains("windowStartTime"));
  ASSERT_TRUE(WaitFault("MAINTENANCE_STARTED"));
  ASSERT_TRUE(api_.WaitField(kAlphaParent + "/nodes/m2", "/health", "HEALTHY"));
  // performMaintenance starts it now.
  json op = api_.Finish(api_.Call("POST", kAlphaParent + "/nodes/m2:performMaintenance", "{}"));
  EXPECT_EQ(op["metadata"]["verb"], "performMaintenance");
  EXPECT_FALSE(op.contains("error")) << op.dump();
}

TEST_F(FaultsApiTest, PreemptingASpotNodeLeavesItPreemptedAndOnlyDeletable) {
  CreateNode("on-demand");
  CreateNode("spot", {{"spot", true}});
  ExpectApiError(api_.Call("POST", kEmulator + "/nodes/on-demand:preempt", "{}"), 400,
                 "FAILED_PRECONDITION", "not preemptible");
  ClientResponse r =
      api_.Call("POST", kEmulator + "/nodes/spot:preempt", json{{"reason", "test says so"}});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.Json()["state"], "PREEMPTED");
  ExpectApiError(api_.Call("POST", kParent + "/nodes/spot:start", "{}"), 400, "FAILED_PRECONDITION",
                 "PREEMPTED");
  ASSERT_TRUE(WaitFault("PREEMPTED"));
  EXPECT_NE(Faults("PREEMPTED")[0]["message"].get<std::string>().find("test says so"),
            std::string::npos);
  // Its capacity went back to the zone at once; it is gone once deleted.
  json capacity = api_.Get(std::string("/_emulator/capacity/") + kZone);
  EXPECT_EQ(capacity["usedTensorcores"], 8);  // only on-demand's
  api_.Finish(api_.Call("DELETE", kParent + "/nodes/spot"));
  EXPECT_EQ(api_.Call("GET", kParent + "/nodes/spot").status, 404);
}

TEST_F(FaultsApiTest, PreemptingAQueuedResourcesNodeSuspendsItByTheService) {
  json body = {{"tpu",
                {{"nodeSpec", json::array({{{"parent", kParentName},
                                            {"multisliceParams", {{"nodeCount", 2}}},
                                            {"node",
                                             {{"acceleratorType", "v4-8"},
                                              {"runtimeVersion", "tpu-ubuntu2204-base"}}}}})}}},
               {"spot", json::object()}};
  api_.Finish(api_.Call("POST", kParent + "/queuedResources?queuedResourceId=sq", body));
  ASSERT_TRUE(api_.WaitField(kParent + "/queuedResources/sq", "/state/state", "ACTIVE"));
  EXPECT_EQ(api_.Get(kParent + "/nodes/sq-0")["schedulingConfig"]["spot"], true);
  ASSERT_EQ(api_.Call("POST", kEmulator + "/nodes/sq-1:preempt", "{}").status, 200);
  ASSERT_TRUE(api_.WaitField(kParent + "/queuedResources/sq", "/state/state", "SUSPENDED"));
  EXPECT_EQ(api_.Get(kParent + "/queuedResources/sq")["state"]["stateInitiator"], "SERVICE");
  // SUSPENDING deleted the whole slice.
  EXPECT_TRUE(api_.WaitGone(kParent + "/nodes/sq-0"));
  EXPECT_TRUE(api_.WaitGone(kParent + "/nodes/sq-1"));
  // performMaintenanceQueuedResource needs nodes.
  ExpectApiError(
      api_.Call("POST", kAlphaParent + "/queuedResources/sq:performMaintenanceQueuedResource",
                "{}"),
      400, "FAILED_PRECONDITION", "has no nodes");
}

TEST_F(FaultsApiTest, QueuedResourceMaintenanceCompletesWhenEveryNodeIsHealthy) {
  json body = {
      {"tpu",
       {{"nodeSpec", json::array({{{"parent", kParentName},
                                   {"multisliceParams", {{"nodeCount", 2}, {"nodeIdPrefix", "pm"}}},
                                   {"node",
                                    {{"acceleratorType", "v4-8"},
                                     {"runtimeVersion", "tpu-ubuntu2204-base"}}}}})}}}};
  api_.Finish(api_.Call("POST", kParent + "/queuedResources?queuedResourceId=pmq", body));
  ASSERT_TRUE(api_.WaitField(kParent + "/queuedResources/pmq", "/state/state", "ACTIVE"));
  ExpectApiError(
      api_.Call("POST", kAlphaParent + "/queuedResources/pmq:performMaintenanceQueuedResource",
                json{{"nodeNames", {"stranger"}}}),
      400, "INVALID_ARGUMENT", "stranger");
  ClientResponse reply = api_.Call(
      "POST", kAlphaParent + "/queuedResources/pmq:performMaintenanceQueuedResource", "{}");
  ASSERT_EQ(reply.status, 200) << reply.body;
  EXPECT_EQ(api_.Get(kParent + "/nodes/pm-0")["health"], "UNHEALTHY_MAINTENANCE");
  EXPECT_EQ(api_.Get(kParent + "/nodes/pm-1")["health"], "UNHEALTHY_MAINTENANCE");
  json op = api_.Finish(reply);
  EXPECT_EQ(op["response"]["@type"],
            "type.googleapis.com/google.cloud.tpu.v2alpha1.QueuedResource");
  EXPECT_EQ(api_.Get(kParent + "/nodes/pm-0")["health"], "HEALTHY");
  EXPECT_EQ(api_.Get(kParent + "/nodes/pm-1")["health"], "HEALTHY");
}

TEST_F(FaultsApiTest, ChaosRulesFailMatchingCallsAndCanBeListedAndDeleted) {
  ClientResponse added = api_.Call("POST", "/_emulator/chaosRules",
                                   json{{"id", "flaky-list"},
                                        {"method", "GET"},
                                        {"path", "/nodes$"},
                                        {"maxHits", 2},
                                        {"error", {{"code", 503}}}});
  ASSERT_EQ(added.status, 200) << added.body;
  EXPECT_EQ(added.Json()["error"]["status"], "UNAVAILABLE");
  ExpectApiError(api_.Call("GET", kParent + "/nodes"), 503, "UNAVAILABLE", "flaky-list");
  ExpectApiError(api_.Call("GET", kParent + "/nodes"), 503, "UNAVAILABLE", "flaky-list");
  EXPECT_EQ(api_.Call("GET", kParent + "/nodes").status, 200);    // maxHits reached
  EXPECT_EQ(api_.Call("GET", kParent + "/nodes/x").status, 404);  // path did not match
  // A stockout: the create is accepted and its Operation fails with code 8.
  ASSERT_EQ(api_.Call("POST", "/_emulator/chaosRules",
                      json{{"id", "stockout"},
                           {"method", "POST"},
                           {"path", "/nodes$"},
                           {"operationError", {{"code", "RESOURCE_EXHAUSTED"}}}})
                .status,
            200);
  json op = api_.Finish(
      api_.Call("POST", kParent + "/nodes?nodeId=out",
                json{{"acceleratorType", "v4-8"}, {"runtimeVersion", "tpu-ubuntu2204-base"}}));
  EXPECT_EQ(op["error"]["code"], 8);
  EXPECT_NE(op["error"]["message"].get<std::string>().find("no more capacity in the zone \"" +
                                                           std::string(kZone) + "\""),
            std::string::npos);
  EXPECT_EQ(api_.Call("GET", kParent + "/nodes/out").status, 404);
  json rules = api_.Get("/_emulator/chaosRules");
  ASSERT_EQ(rules["rules"].size(), 2u);
  EXPECT_EQ(rules["rules"][0]["hits"], 2);
  EXPECT_EQ(api_.Call("DELETE", "/_emulator/chaosRules/stockout").status, 200);
  ExpectApiError(api_.Call("DELETE", "/_emulator/chaosRules/stockout"), 404, "NOT_FOUND",
                 "stockout");
  ExpectApiError(api_.Call("POST", "/_emulator/chaosRules", json{{"path", "("}}), 400,
                 "INVALID_ARGUMENT", "path");
  ExpectApiError(api_.Call("POST", "/_emulator/chaosRules", json{{"error", {{"code", 777}}}}), 400,
                 "INVALID_ARGUMENT", "error.code");
  ASSERT_TRUE(WaitFault("CHAOS"));
  EXPECT_EQ(Faults("CHAOS").size(), 3u);
}

TEST_F(FaultsApiTest, ZoneCapacityChangesAtRunTime) {
  ExpectApiError(api_.Call("PUT", "/_emulator/capacity/nowhere-1a", json{{"tensorcores", 1}}), 404,
                 "NOT_FOUND", "nowhere-1a");
  ExpectApiError(api_.Call("PUT", std::string("/_emulator/capacity/") + kZone, "{}"), 400,
                 "INVALID_ARGUMENT", "tensorcores");
  ASSERT_EQ(api_.Call("PUT", std::string("/_emulator/capacity/") + kZone, json{{"tensorcores", 4}})
                .status,
            200);
  json op = api_.Finish(
      api_.Call("POST", kParent + "/nodes?nodeId=big",
                json{{"acceleratorType", "v4-8"}, {"runtimeVersion", "tpu-ubuntu2204-base"}}));
  EXPECT_EQ(op["error"]["code"], 8);
  json cleared = api_.Call("DELETE", std::string("/_emulator/capacity/") + kZone).Json();
  EXPECT_EQ(cleared["capacityTensorcores"], 65536);
  json all = api_.Get("/_emulator/capacity");
  EXPECT_GT(all["zones"].size(), 5u);
  ASSERT_TRUE(WaitFault("CAPACITY"));
}

class RandomPreemptionTest : public FaultsApiTest {
 protected:
  // About every spot node goes at the first sweep: 1 - exp(-3.6e6 / h * 20 ms) ≈ 1.
  RandomPreemptionTest() : FaultsApiTest(Options(/*preemption_rate=*/3.6e6)) {}
};

TEST_F(RandomPreemptionTest, SpotNodesArePreemptedAtTheConfiguredRateOthersNever) {
  CreateNode("safe");
  CreateNode("lucky", {{"preemptible", true}});
  ASSERT_TRUE(api_.WaitField(kParent + "/nodes/lucky", "/state", "PREEMPTED"));
  EXPECT_EQ(api_.Get(kParent + "/nodes/safe")["state"], "READY");
  ASSERT_TRUE(WaitFault("PREEMPTED"));
  EXPECT_NE(Faults("PREEMPTED")[0]["message"].get<std::string>().find("random preemption"),
            std::string::npos);
  EXPECT_EQ(api_.Call("PUT", "/_emulator/preemption", json{{"ratePerHour", 0}}).status, 200);
  EXPECT_EQ(api_.Get("/_emulator/preemption")["ratePerHour"], 0);
}

// A job long enough to be running when the fault lands (it is ended, never run out).
constexpr char kLongJob[] =
    R"({"workload": {"mlp": {"layers": 4, "batch": 256, "hidden": 512, "steps": 10000}}})";

class FaultsDuringJobsTest : public FaultsApiTest {
 protected:
  // Submits kLongJob to `node` and waits until it runs; the job's resource path.
  std::string RunningJob(const std::string& node) {
    ClientResponse r = api_.Call("POST", kParent + "/nodes/" + node + "/jobs", kLongJob);
    EXPECT_EQ(r.status, 200) << r.body;
    const std::string job = "/v2/" + r.Json().value("name", "");
    EXPECT_TRUE(api_.WaitField(job, "/state", "RUNNING"));
    return job;
  }
};

TEST_F(FaultsDuringJobsTest, PreemptionEndsTheRunningJobWithAReason) {
  CreateNode("spot-job", {{"spot", true}});
  const std::string job = RunningJob("spot-job");
  ASSERT_EQ(api_.Call("POST", kEmulator + "/nodes/spot-job:preempt", "{}").status, 200);
  ASSERT_TRUE(api_.WaitField(job, "/state", "FAILED", std::chrono::seconds(30)));
  EXPECT_NE(api_.Get(job)["reason"].get<std::string>().find("was preempted"), std::string::npos)
      << api_.Get(job).dump();
}

TEST_F(FaultsDuringJobsTest, MaintenanceInterruptsTheRunningJobWithAReason) {
  CreateNode("maint-job");
  const std::string job = RunningJob("maint-job");
  ClientResponse r =
      api_.Call("POST", kAlphaParent + "/nodes/maint-job:simulateMaintenanceEvent", "{}");
  ASSERT_EQ(r.status, 200) << r.body;
  ASSERT_TRUE(api_.WaitField(job, "/state", "FAILED", std::chrono::seconds(30)));
  EXPECT_NE(api_.Get(job)["reason"].get<std::string>().find("host maintenance"), std::string::npos)
      << api_.Get(job).dump();
  api_.Finish(r);  // the node is HEALTHY again afterwards
  EXPECT_EQ(api_.Get(kParent + "/nodes/maint-job")["health"], "HEALTHY");
  EXPECT_EQ(api_.Get(job)["attempt"], 1);  // maxRetries 0 (the default): not run again
  EXPECT_EQ(api_.Get(job)["maxRetries"], 0);
}

// Long enough to be running when the fault lands (about a second on one host core), short enough
// to finish once it runs again. A step takes about 0.3 s under TSan, so sanitizer builds run 20
// steps (150 took 45 s alone and over 60 s beside another test on 2 cores).
const std::string kRetriedJob =
    std::string(R"({"workload": {"mlp": {"layers": 4, "batch": 256, "hidden": 512, "steps": )") +
    (kSanitizedBuild ? "20" : "150") + R"(}}, "maxRetries": 1})";
constexpr std::chrono::seconds kRetriedJobWait{kSanitizedBuild ? 180 : 60};

TEST_F(FaultsDuringJobsTest, MaintenanceRequeuesAJobWithRetriesLeftThatThenSucceeds) {
  CreateNode("retry-job");
  ClientResponse submitted = api_.Call("POST", kParent + "/nodes/retry-job/jobs", kRetriedJob);
  ASSERT_EQ(submitted.status, 200) << submitted.body;
  EXPECT_EQ(submitted.Json()["maxRetries"], 1);
  EXPECT_EQ(submitted.Json()["spec"]["maxRetries"], 1);
  const std::string job = "/v2/" + submitted.Json().value("name", "");
  ASSERT_TRUE(api_.WaitField(job, "/state", "RUNNING"));
  ClientResponse r =
      api_.Call("POST", kAlphaParent + "/nodes/retry-job:simulateMaintenanceEvent", "{}");
  ASSERT_EQ(r.status, 200) << r.body;
  ASSERT_TRUE(api_.WaitField(job, "/state", "SUCCEEDED", kRetriedJobWait)) << api_.Get(job).dump();
  json done = api_.Get(job);
  EXPECT_EQ(done["attempt"], 2);
  EXPECT_EQ(done["maxRetries"], 1);
  std::string log;
  const json logs = api_.Get(job + "/logs");
  for (const json& line : logs["lines"]) log += line.get<std::string>() + "\n";
  EXPECT_NE(log.find("interrupted by host maintenance"), std::string::npos) << log;
  EXPECT_NE(log.find("retry 1 of 1: re-queued"), std::string::npos) << log;
  EXPECT_NE(log.find("running (attempt 2)"), std::string::npos) << log;
  // The feed shows the re-queue like any job transition, and the second run starts only after
  // the maintenance ended.
  json events = api_.Get("/v2/projects/proj/events?since=0&pageSize=500")["events"];
  int requeued = -1, ended = -1, second_run = -1;
  for (int i = 0; i < static_cast<int>(events.size()); ++i) {
    const json& e = events[i];
    if (e["kind"] == "fault" && e["state"] == "MAINTENANCE_ENDED") ended = i;
    if (e["kind"] != "job" || e["resource"] != done["name"]) continue;
    if (e["state"] == "QUEUED" && e.value("previousState", "") == "RUNNING") requeued = i;
    if (e["state"] == "RUNNING" && requeued >= 0) second_run = i;
  }
  ASSERT_GE(requeued, 0) << events.dump();
  EXPECT_NE(events[requeued]["message"].get<std::string>().find("attempt 2"), std::string::npos);
  ASSERT_GE(ended, 0) << events.dump();
  EXPECT_GT(second_run, ended) << events.dump();
}

TEST_F(FaultsDuringJobsTest, APreemptedNodesJobEndsFailedWhateverItsRetries) {
  CreateNode("spot-retry", {{"spot", true}});
  ClientResponse submitted =
      api_.Call("POST", kParent + "/nodes/spot-retry/jobs",
                R"({"workload": {"mlp": {"layers": 4, "batch": 256, "hidden": 512,
                    "steps": 10000}}, "maxRetries": 3})");
  ASSERT_EQ(submitted.status, 200) << submitted.body;
  const std::string job = "/v2/" + submitted.Json().value("name", "");
  ASSERT_TRUE(api_.WaitField(job, "/state", "RUNNING"));
  ASSERT_EQ(api_.Call("POST", kEmulator + "/nodes/spot-retry:preempt", "{}").status, 200);
  ASSERT_TRUE(api_.WaitField(job, "/state", "FAILED", std::chrono::seconds(30)));
  json failed = api_.Get(job);
  const std::string reason = failed["reason"];
  EXPECT_NE(reason.find("was preempted"), std::string::npos) << reason;
  EXPECT_NE(reason.find("PREEMPTED node can only be deleted"), std::string::npos) << reason;
  EXPECT_EQ(failed["attempt"], 1);
  EXPECT_EQ(failed["maxRetries"], 3);
}

TEST_F(FaultsDuringJobsTest, MaxRetriesOutOfRangeIs400NamingTheField) {
  CreateNode("bad-retries");
  for (const char* value : {"11", "-1", "\"many\"", "2.5"}) {
    ExpectApiError(
        api_.Call("POST", kParent + "/nodes/bad-retries/jobs",
                  std::string(R"({"workload": {"matmul": {}}, "maxRetries": )") + value + "}"),
        400, "INVALID_ARGUMENT", "maxRetries");
  }
}

}  // namespace
}  // namespace tpuemu::testing
