// queuedResources.* through real HTTP: the life cycle (accept, wait for capacity, provision,
// ACTIVE, suspend, reset, delete with and without force), multislice, the queueing policy, the
// project quota a queued resource holds, requestId idempotency, reservations, and the v2alpha1
// and snake_case spellings.
#include <gtest/gtest.h>

#include "tests/e2e/api_paths.h"
#include "tests/e2e/api_test_client.h"

namespace tpuemu::testing {
namespace {

using nlohmann::json;

json NodeSpec(const std::string& node_id, const std::string& type = "v4-8") {
  json spec = {{"parent", kParentName},
               {"node", {{"acceleratorType", type}, {"runtimeVersion", "tpu-ubuntu2204-base"}}}};
  spec["nodeId"] = node_id;
  return spec;
}

json Multislice(int count, const std::string& prefix = "") {
  json params = {{"nodeCount", count}};
  if (!prefix.empty()) params["nodeIdPrefix"] = prefix;
  return {{"parent", kParentName},
          {"multisliceParams", params},
          {"node", {{"acceleratorType", "v4-8"}, {"runtimeVersion", "tpu-ubuntu2204-base"}}}};
}

json Body(json spec) { return {{"tpu", {{"nodeSpec", json::array({std::move(spec)})}}}}; }

class QueuedResourcesApiTest : public ::testing::Test {
 protected:
  QueuedResourcesApiTest() : QueuedResourcesApiTest(Options(0)) {}
  explicit QueuedResourcesApiTest(daemon::AppOptions options) : server_(options) {}

  static daemon::AppOptions Options(int64_t project_quota) {
    return {.nodes = {.provisioning_delay_ms = 0,
                      .transition_delay_ms = 0,
                      .project_quota_tensorcores = project_quota},
            .queued_resources = {.accept_delay_ms = 0, .transition_delay_ms = 0},
            .faults = {.maintenance_duration_ms = 200},
            .observability = {.utilization_interval_ms = 0}};
  }
  ClientResponse Create(const std::string& id, const json& body, const std::string& extra = "") {
    return api_.Call("POST", kParent + "/queuedResources?queuedResourceId=" + id + extra, body);
  }
  // Creates `id`, waits for its create Operation, then for it to be in `state`.
  void CreateUntil(const std::string& id, const json& body, const std::string& state) {
    json op = api_.Finish(Create(id, body));
    ASSERT_TRUE(op.value("done", false)) << op.dump();
    ASSERT_FALSE(op.contains("error")) << op.dump();
    ASSERT_TRUE(api_.WaitField(Qr(id), "/state/state", state));
  }
  static std::string Qr(const std::string& id) { return kParent + "/queuedResources/" + id; }
  static std::string Node(const std::string& id) { return kParent + "/nodes/" + id; }
  void SetCapacity(int64_t tensorcores) {
    ASSERT_EQ(api_.Call("PUT", std::string("/_emulator/capacity/") + kZone,
                        json{{"tensorcores", tensorcores}})
                  .status,
              200);
  }

  ApiServer server_;
  ApiTestClient api_{server_.port()};
};

TEST_F(QueuedResourcesApiTest, SingleNodeGoesActiveWithANodeThatNamesIt) {
  ClientResponse reply = Create("qr-a", Body(NodeSpec("node-a")));
  ASSERT_EQ(reply.status, 200) << reply.body;
  EXPECT_EQ(reply.Json()["metadata"]["verb"], "create");
  EXPECT_EQ(reply.Json()["metadata"]["target"], kParentName + "/queuedResources/qr-a");
  json op = api_.Finish(reply);
  EXPECT_EQ(op["response"]["@type"], "type.googleapis.com/google.cloud.tpu.v2.QueuedResource");
  EXPECT_EQ(op["response"]["name"], kParentName + "/queuedResources/qr-a");
  ASSERT_TRUE(api_.WaitField(Qr("qr-a"), "/state/state", "ACTIVE"));
  json qr = api_.Get(Qr("qr-a"));
  EXPECT_EQ(qr["state"]["stateInitiator"], "USER");
  EXPECT_TRUE(qr["state"].contains("activeData"));
  EXPECT_EQ(qr["tpu"]["nodeSpec"][0]["nodeId"], "node-a");
  EXPECT_EQ(qr["tpu"]["nodeSpec"][0]["node"]["acceleratorConfig"]["type"], "V4");
  json node = api_.Get(Node("node-a"));
  EXPECT_EQ(node["state"], "READY");
  EXPECT_EQ(node["queuedResource"], kParentName + "/queuedResources/qr-a");
  EXPECT_FALSE(node.contains("multisliceNode"));
  json list = api_.Get(kParent + "/queuedResources");
  ASSERT_EQ(list["queuedResources"].size(), 1u);
  EXPECT_EQ(api_.Get("/v2/projects/proj/locations/-/queuedResources")["queuedResources"].size(),
            1u);
}

TEST_F(QueuedResourcesApiTest, MultisliceMakesPrefixedNodes) {
  CreateUntil("ms", Body(Multislice(3, "slice")), "ACTIVE");
  for (const char* id : {"slice-0", "slice-1", "slice-2"}) {
    json node = api_.Get(Node(id));
    EXPECT_EQ(node["state"], "READY") << id;
    EXPECT_EQ(node["multisliceNode"], true) << id;
  }
  // The prefix defaults to the queued resource id.
  CreateUntil("dflt", Body(Multislice(2)), "ACTIVE");
  EXPECT_EQ(api_.Get(Node("dflt-1"))["multisliceNode"], true);
}

TEST_F(QueuedResourcesApiTest, BadRequestsNameTheField) {
  json both = NodeSpec("x");
  both["multisliceParams"] = {{"nodeCount", 2}};
  ExpectApiError(Create("q1", Body(both)), 400, "INVALID_ARGUMENT", "Exactly one of");
  ExpectApiError(Create("q2", Body(Multislice(1))), 400, "INVALID_ARGUMENT",
                 "multisliceParams.nodeCount': 1");
  json elsewhere = NodeSpec("x");
  elsewhere["parent"] = "projects/proj/locations/us-east1-d";
  ExpectApiError(Create("q3", Body(elsewhere)), 400, "INVALID_ARGUMENT", "tpu.nodeSpec[0].parent");
  json tiers = Body(NodeSpec("x"));
  tiers["spot"] = json::object();
  tiers["guaranteed"] = json::object();
  ExpectApiError(Create("q4", tiers), 400, "INVALID_ARGUMENT", "at most one of spot");
  json policy = Body(NodeSpec("x"));
  policy["queueingPolicy"] = {{"validUntilDuration", "1h"}};
  ExpectApiError(Create("q5", policy), 400, "INVALID_ARGUMENT",
                 "queueingPolicy.validUntilDuration");
  ExpectApiError(Create("q6", Body(NodeSpec("Bad_Id"))), 400, "INVALID_ARGUMENT", "Bad_Id");
  ExpectApiError(Create("q7", Body(NodeSpec("x", "v9-8"))), 400, "INVALID_ARGUMENT",
                 "tpu.nodeSpec[0].node");
  ExpectApiError(Create("bad$id", Body(NodeSpec("x"))), 400, "INVALID_ARGUMENT",
                 "queuedResourceId");
  ExpectApiError(api_.Call("POST",
                           "/v2/projects/proj/locations/nowhere-1a/queuedResources?"
                           "queuedResourceId=q",
                           Body(NodeSpec("x"))),
                 404, "NOT_FOUND", "projects/proj/locations/nowhere-1a");
  EXPECT_EQ(api_.Call("GET", Qr("missing")).status, 404);
  // A node name that is taken is refused up front.
  CreateUntil("first", Body(NodeSpec("taken")), "ACTIVE");
  ExpectApiError(Create("second", Body(NodeSpec("taken"))), 409, "ALREADY_EXISTS", "taken");
  ExpectApiError(Create("first", Body(NodeSpec("other"))), 409, "ALREADY_EXISTS", "first");
}

TEST_F(QueuedResourcesApiTest, DeleteNeedsForceWhileItHasNodes) {
  CreateUntil("del", Body(NodeSpec("del-node")), "ACTIVE");
  ExpectApiError(api_.Call("DELETE", Qr("del")), 400, "FAILED_PRECONDITION", "force=true");
  // gcloud sends force=True.
  json op = api_.Finish(api_.Call("DELETE", Qr("del") + "?force=True"));
  EXPECT_EQ(op["metadata"]["verb"], "delete");
  EXPECT_EQ(op["response"]["@type"], "type.googleapis.com/google.protobuf.Empty");
  EXPECT_EQ(api_.Call("GET", Qr("del")).status, 404);
  EXPECT_EQ(api_.Call("GET", Node("del-node")).status, 404);
}

TEST_F(QueuedResourcesApiTest, DeletingTheNodesSuspendsItThenItDeletesWithoutForce) {
  // Google's CI teardown: delete the nodes, wait for SUSPENDED, delete the queued resource.
  CreateUntil("td", Body(Multislice(2, "td")), "ACTIVE");
  api_.Finish(api_.Call("DELETE", Node("td-0")));
  ASSERT_TRUE(api_.WaitField(Qr("td"), "/state/state", "SUSPENDED"));
  EXPECT_EQ(api_.Get(Qr("td"))["state"]["stateInitiator"], "USER");
  EXPECT_EQ(api_.Call("GET", Node("td-1")).status, 404);  // the rest of the slice went too
  api_.Finish(api_.Call("DELETE", Qr("td")));
  EXPECT_EQ(api_.Call("GET", Qr("td")).status, 404);
}

TEST_F(QueuedResourcesApiTest, ResetRequeuesASuspendedOne) {
  CreateUntil("rs", Body(NodeSpec("rs-node")), "ACTIVE");
  ExpectApiError(api_.Call("POST", Qr("rs") + ":reset", "{}"), 400, "FAILED_PRECONDITION",
                 "SUSPENDED or FAILED");
  api_.Finish(api_.Call("DELETE", Node("rs-node")));
  ASSERT_TRUE(api_.WaitField(Qr("rs"), "/state/state", "SUSPENDED"));
  json op = api_.Finish(api_.Call("POST", Qr("rs") + ":reset", "{}"));
  EXPECT_EQ(op["metadata"]["verb"], "reset");
  ASSERT_TRUE(api_.WaitField(Qr("rs"), "/state/state", "ACTIVE"));
  EXPECT_EQ(api_.Get(Node("rs-node"))["state"], "READY");
}

TEST_F(QueuedResourcesApiTest, WaitsForCapacityAndProvisionsWhenItIsFreed) {
  SetCapacity(8);
  ASSERT_EQ(api_.Finish(api_.Call("POST", kParent + "/nodes?nodeId=hog",
                                  json{{"acceleratorType", "v4-8"},
                                       {"runtimeVersion", "tpu-ubuntu2204-base"}}))
                .value("done", false),
            true);
  CreateUntil("waiter", Body(NodeSpec("waiter-node")), "WAITING_FOR_RESOURCES");
  EXPECT_EQ(api_.Call("GET", Node("waiter-node")).status, 404);
  // Freeing the capacity (deleting the node that holds it) lets the queue move.
  api_.Finish(api_.Call("DELETE", Node("hog")));
  ASSERT_TRUE(api_.WaitField(Qr("waiter"), "/state/state", "ACTIVE"));
  // Growing the zone does too.
  CreateUntil("second", Body(NodeSpec("second-node")), "WAITING_FOR_RESOURCES");
  SetCapacity(16);
  ASSERT_TRUE(api_.WaitField(Qr("second"), "/state/state", "ACTIVE"));
}

TEST_F(QueuedResourcesApiTest, ValidUntilFailsAQueuedResourceStillWaiting) {
  SetCapacity(0);
  json body = Body(NodeSpec("late"));
  body["queueingPolicy"] = {{"validUntilDuration", "0.2s"}};
  CreateUntil("late", body, "FAILED");
  json qr = api_.Get(Qr("late"));
  EXPECT_EQ(qr["state"]["stateInitiator"], "SERVICE");
  EXPECT_EQ(qr["state"]["failedData"]["error"]["code"], 8);
  EXPECT_NE(qr["state"]["failedData"]["error"]["message"].get<std::string>().find("validUntil"),
            std::string::npos);
  // A FAILED queued resource deletes without force.
  api_.Finish(api_.Call("DELETE", Qr("late")));
  EXPECT_EQ(api_.Call("GET", Qr("late")).status, 404);
}

TEST_F(QueuedResourcesApiTest, ValidAfterHoldsItAccepted) {
  json body = Body(NodeSpec("later"));
  body["queueingPolicy"] = {{"validAfterDuration", "0.3s"}};
  json op = api_.Finish(Create("later", body));
  EXPECT_EQ(op["response"]["state"]["state"], "ACCEPTED");
  EXPECT_EQ(api_.Get(Qr("later"))["state"]["state"], "ACCEPTED");
  ASSERT_TRUE(api_.WaitField(Qr("later"), "/state/state", "ACTIVE"));
  EXPECT_EQ(api_.Get(Qr("later"))["queueingPolicy"]["validAfterDuration"], "0.3s");
}

TEST_F(QueuedResourcesApiTest, RequestIdMakesCreateAndDeleteIdempotent) {
  ClientResponse a = Create("idem", Body(NodeSpec("idem-node")), "&requestId=r-1");
  ClientResponse b = Create("idem", Body(NodeSpec("idem-node")), "&requestId=r-1");
  ASSERT_EQ(a.status, 200) << a.body;
  ASSERT_EQ(b.status, 200) << b.body;
  EXPECT_EQ(a.Json()["name"], b.Json()["name"]);
  ExpectApiError(Create("other", Body(NodeSpec("other-node")), "&requestId=r-1"), 409,
                 "ALREADY_EXISTS", "r-1");
  ASSERT_TRUE(api_.WaitField(Qr("idem"), "/state/state", "ACTIVE"));
  ClientResponse d1 = api_.Call("DELETE", Qr("idem") + "?force=true&requestId=d-1");
  ClientResponse d2 = api_.Call("DELETE", Qr("idem") + "?force=true&requestId=d-1");
  ASSERT_EQ(d2.status, 200) << d2.body;
  EXPECT_EQ(d1.Json()["name"], d2.Json()["name"]);
  api_.Finish(d1);
  // Even once it is gone, the retry answers with the same Operation.
  EXPECT_EQ(api_.Call("DELETE", Qr("idem") + "?force=true&requestId=d-1").Json()["name"],
            d1.Json()["name"]);
}

TEST_F(QueuedResourcesApiTest, V2Alpha1AndSnakeCaseSpellings) {
  // axlearn's body: snake_case proto names and v2alpha1's multi_node_params.
  json body = {
      {"tpu",
       {{"node_spec",
         json::array({{{"parent", kParentName},
                       {"multi_node_params", {{"node_count", 2}, {"node_id_prefix", "ax"}}},
                       {"node",
                        {{"accelerator_type", "v4-8"},
                         {"runtime_version", "tpu-ubuntu2204-base"},
                         {"labels", {{"my_label", "x"}}}}}}})}}},
      {"best_effort", json::object()}};
  json op =
      api_.Finish(api_.Call("POST", kAlphaParent + "/queuedResources?queuedResourceId=ax", body));
  EXPECT_EQ(op["metadata"]["@type"],
            "type.googleapis.com/google.cloud.tpu.v2alpha1.OperationMetadata");
  EXPECT_EQ(op["response"]["@type"],
            "type.googleapis.com/google.cloud.tpu.v2alpha1.QueuedResource");
  ASSERT_TRUE(api_.WaitField(kAlphaParent + "/queuedResources/ax", "/state/state", "ACTIVE"));
  json alpha = api_.Get(kAlphaParent + "/queuedResources/ax");
  EXPECT_EQ(alpha["tpu"]["nodeSpec"][0]["multiNodeParams"]["nodeCount"], 2);
  EXPECT_TRUE(alpha.contains("bestEffort"));
  json v2 = api_.Get(Qr("ax"));
  EXPECT_EQ(v2["tpu"]["nodeSpec"][0]["multisliceParams"]["nodeIdPrefix"], "ax");
  json node = api_.Get(Node("ax-1"));
  EXPECT_EQ(node["labels"]["my_label"], "x");                // map keys are data, never renamed
  EXPECT_EQ(node["schedulingConfig"]["preemptible"], true);  // bestEffort is preemptible
  // enum-encoding=int.
  json ints = api_.Get(Qr("ax") + "?%24alt=json%3Benum-encoding%3Dint");
  EXPECT_EQ(ints["state"]["state"], 6);
  EXPECT_EQ(ints["state"]["stateInitiator"], 1);
}

TEST_F(QueuedResourcesApiTest, EventsReportEveryTransition) {
  CreateUntil("ev", Body(NodeSpec("ev-node")), "ACTIVE");
  std::vector<std::string> states;
  ASSERT_TRUE(WaitFor([&] {
    states.clear();
    json events = api_.Get("/v2/projects/proj/events?since=0&pageSize=100");
    for (const json& e : events["events"]) {
      if (e["kind"] == "queuedResource") states.push_back(e["state"]);
    }
    return !states.empty() && states.back() == "ACTIVE";
  }));
  EXPECT_EQ(states.front(), "CREATING");
}

class QueuedResourceQuotaTest : public QueuedResourcesApiTest {
 protected:
  QueuedResourceQuotaTest() : QueuedResourcesApiTest(Options(/*project_quota=*/8)) {}
};

TEST_F(QueuedResourceQuotaTest, SuspendedAndFailedOnesHoldQuotaUntilDeleted) {
  json node = {{"acceleratorType", "v4-8"}, {"runtimeVersion", "tpu-ubuntu2204-base"}};
  CreateUntil("held", Body(NodeSpec("held-node")), "ACTIVE");
  ExpectApiError(api_.Call("POST", kParent + "/nodes?nodeId=extra", node), 429,
                 "RESOURCE_EXHAUSTED", "TPU_TENSORCORES_PER_PROJECT");
  api_.Finish(api_.Call("DELETE", Node("held-node")));
  ASSERT_TRUE(api_.WaitField(Qr("held"), "/state/state", "SUSPENDED"));
  ExpectApiError(api_.Call("POST", kParent + "/nodes?nodeId=extra", node), 429,
                 "RESOURCE_EXHAUSTED", "in use: 8");
  ExpectApiError(Create("more", Body(NodeSpec("more-node"))), 429, "RESOURCE_EXHAUSTED",
                 "queued resource more");
  api_.Finish(api_.Call("DELETE", Qr("held")));
  json op = api_.Finish(api_.Call("POST", kParent + "/nodes?nodeId=extra", node));
  EXPECT_FALSE(op.contains("error")) << op.dump();
}

TEST_F(QueuedResourcesApiTest, ReservedCapacityIsUsedInsteadOfTheZones) {
  SetCapacity(0);
  ClientResponse made =
      api_.Call("POST",
                std::string("/_emulator/projects/proj/locations/") + kZone +
                    "/reservations?reservationId=res-a",
                json{{"size", 8}, {"capacityUnits", "CORES"}, {"resourceType", "v4"}});
  ASSERT_EQ(made.status, 200) << made.body;
  json body = Body(NodeSpec("rsv-node"));
  body["reservationName"] = kParentName + "/reservations/-";  // gcloud --reserved
  CreateUntil("rsv", body, "ACTIVE");
  EXPECT_EQ(api_.Get(Node("rsv-node"))["schedulingConfig"]["reserved"], true);
  json reservations = api_.Get(kAlphaParent + "/reservations");
  ASSERT_EQ(reservations["reservations"].size(), 1u);
  EXPECT_EQ(reservations["reservations"][0]["standard"]["usage"]["total"], "8");
  // Full: the next reserved one waits there.
  json second = Body(NodeSpec("rsv-node-2"));
  second["guaranteed"] = {{"reserved", true}};  // v2alpha1's spelling of --reserved
  CreateUntil("rsv2", second, "WAITING_FOR_RESOURCES");
  // A reservation the project does not have is refused.
  json unknown = Body(NodeSpec("rsv-node-3"));
  unknown["reservationName"] = kParentName + "/reservations/nope";
  ExpectApiError(Create("rsv3", unknown), 400, "INVALID_ARGUMENT", "reservationName");
}

}  // namespace
}  // namespace tpuemu::testing
