// nodes.* through real HTTP: every method and every error the issue lists.
#include <gtest/gtest.h>

#include <future>

#include "tests/e2e/api_paths.h"
#include "tests/e2e/api_server.h"

namespace tpuemu::testing {
namespace {

using nlohmann::json;

class NodesApiTest : public ::testing::Test {
 protected:
  ClientResponse Call(const std::string& method, const std::string& target,
                      const std::string& body = "",
                      std::map<std::string, std::string> headers = {}) {
    Result<ClientResponse> r = client_.Request(method, target, body, std::move(headers));
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : ClientResponse{};
  }
  // Creates a node and waits for its create Operation; returns the finished Operation.
  json CreateReady(const std::string& id, const std::string& type = "v4-8") {
    ClientResponse r =
        Call("POST", std::string(kParent) + "/nodes?nodeId=" + id,
             json{{"acceleratorType", type}, {"runtimeVersion", "tpu-ubuntu2204-base"}}.dump());
    EXPECT_EQ(r.status, 200) << r.body;
    return WaitOperation(client_, r.Json()["name"]);
  }
  void ExpectError(const ClientResponse& r, int http, const std::string& status,
                   const std::string& message_part) {
    EXPECT_EQ(r.status, http) << r.body;
    json e = r.Json();
    ASSERT_TRUE(e.contains("error")) << r.body;
    EXPECT_EQ(e["error"]["code"], http);
    EXPECT_EQ(e["error"]["status"], status);
    EXPECT_NE(e["error"]["message"].get<std::string>().find(message_part), std::string::npos)
        << e["error"]["message"];
  }

  ApiServer server_;
  HttpClient client_{"127.0.0.1", server_.port()};
};

TEST_F(NodesApiTest, CreateReturnsOperationThatFinishesWithTheNode) {
  ClientResponse r = Call("POST", std::string(kParent) + "/nodes?nodeId=tpu-a&alt=json",
                          R"({"acceleratorType":"v4-32","runtimeVersion":"tpu-ubuntu2204-base",
                              "description":"d","labels":{"env":"dev"},"metadata":{"k":"v"},
                              "tags":["t1"],"networkConfig":{"enableExternalIps":true},
                              "schedulingConfig":{"preemptible":true},"unknownField":42})");
  ASSERT_EQ(r.status, 200) << r.body;
  json op = r.Json();
  EXPECT_FALSE(op.value("done", false));
  EXPECT_EQ(op["metadata"]["@type"], "type.googleapis.com/google.cloud.tpu.v2.OperationMetadata");
  EXPECT_EQ(op["metadata"]["verb"], "create");
  EXPECT_EQ(op["metadata"]["target"], "projects/proj/locations/us-central2-b/nodes/tpu-a");
  EXPECT_TRUE(op["name"].get<std::string>().starts_with(
      "projects/proj/locations/us-central2-b/operations/operation-"));

  json done = WaitOperation(client_, op["name"]);
  ASSERT_FALSE(done.is_null());
  EXPECT_TRUE(done["metadata"].contains("endTime"));
  json node = done["response"];
  EXPECT_EQ(node["@type"], "type.googleapis.com/google.cloud.tpu.v2.Node");
  EXPECT_EQ(node["state"], "READY");
  EXPECT_FALSE(node.contains("health"));  // the LRO copy has none, like the real server

  json got = Call("GET", std::string(kParent) + "/nodes/tpu-a").Json();
  EXPECT_EQ(got["apiVersion"], "V2");
  EXPECT_EQ(got["health"], "HEALTHY");
  EXPECT_EQ(got["acceleratorConfig"], (json{{"type", "V4"}, {"topology", "2x2x4"}}));
  EXPECT_EQ(got["networkEndpoints"].size(), 4u);
  EXPECT_EQ(got["networkEndpoints"][0]["port"], 8470);
  EXPECT_TRUE(got["networkEndpoints"][0]["accessConfig"].contains("externalIp"));
  EXPECT_EQ(got["networkConfig"]["network"], "projects/proj/global/networks/default");
  EXPECT_EQ(got["schedulingConfig"]["preemptible"], true);
  EXPECT_EQ(got["labels"]["env"], "dev");
  EXPECT_EQ(got["tags"], json::array({"t1"}));
  EXPECT_FALSE(got.contains("unknownField"));
  EXPECT_TRUE(got["createTime"].get<std::string>().ends_with("Z"));
  EXPECT_TRUE(got["id"].is_string());
}

TEST_F(NodesApiTest, AcceleratorConfigWithNumericEnumsAndIntEncoding) {
  ClientResponse r =
      Call("POST", std::string(kParent) + "/nodes?nodeId=cfg&$alt=json%3Benum-encoding=int",
           R"({"acceleratorConfig":{"type":7,"topology":"2x2x2"},
                              "runtimeVersion":"tpu-ubuntu2204-base","labels":{},"metadata":{}})");
  ASSERT_EQ(r.status, 200) << r.body;
  WaitOperation(client_, r.Json()["name"]);
  json node = Call("GET", std::string(kParent) + "/nodes/cfg?$alt=json%3Benum-encoding=int").Json();
  EXPECT_EQ(node["acceleratorType"], "v4-16");
  EXPECT_EQ(node["state"], 2);
  EXPECT_EQ(node["health"], 1);
  EXPECT_EQ(node["apiVersion"], 4);
  EXPECT_EQ(node["acceleratorConfig"]["type"], 7);
  // Without the parameter, names.
  EXPECT_EQ(Call("GET", std::string(kParent) + "/nodes/cfg").Json()["state"], "READY");
}

TEST_F(NodesApiTest, ListPaginatesInStableOrder) {
  for (int i = 0; i < 5; ++i) CreateReady("n" + std::to_string(i));
  std::vector<std::string> names;
  std::string token;
  do {
    std::string target = std::string(kParent) + "/nodes?pageSize=2";
    if (!token.empty()) target += "&pageToken=" + token;
    json page = Call("GET", target).Json();
    for (const json& n : page["nodes"]) names.push_back(n["name"]);
    token = page.value("nextPageToken", "");
  } while (!token.empty());
  ASSERT_EQ(names.size(), 5u);
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(names[i].ends_with("/n" + std::to_string(i)));
  ExpectError(Call("GET", std::string(kParent) + "/nodes?pageSize=-1"), 400, "INVALID_ARGUMENT",
              "pageSize");
  ExpectError(Call("GET", std::string(kParent) + "/nodes?pageToken=zzz"), 400, "INVALID_ARGUMENT",
              "pageToken");
  // locations/- lists every zone.
  EXPECT_EQ(Call("GET", "/v2/projects/proj/locations/-/nodes").Json()["nodes"].size(), 5u);
}

TEST_F(NodesApiTest, StopStartDeleteAndIllegalTransitions) {
  CreateReady("life");
  std::string node = std::string(kParent) + "/nodes/life";
  ExpectError(Call("POST", node + ":start", "{}"), 400, "FAILED_PRECONDITION", "READY");
  json stop = WaitOperation(client_, Call("POST", node + ":stop", "{}").Json()["name"]);
  EXPECT_EQ(stop["response"]["state"], "STOPPED");
  EXPECT_EQ(stop["metadata"]["verb"], "stop");
  ExpectError(Call("POST", node + ":stop", "{}"), 400, "FAILED_PRECONDITION", "STOPPED");
  json start = WaitOperation(client_, Call("POST", node + ":start", "{}").Json()["name"]);
  EXPECT_EQ(start["response"]["state"], "READY");
  json del = WaitOperation(client_, Call("DELETE", node).Json()["name"]);
  EXPECT_EQ(del["response"]["@type"], "type.googleapis.com/google.protobuf.Empty");
  ExpectError(Call("GET", node), 404, "NOT_FOUND",
              "projects/proj/locations/us-central2-b/nodes/life");
  ExpectError(Call("DELETE", node), 404, "NOT_FOUND", "life");
}

TEST_F(NodesApiTest, NothingIsAllowedOnADeletingNode) {
  ApiServer slow({.provisioning_delay_ms = 0, .transition_delay_ms = 60000});
  HttpClient c("127.0.0.1", slow.port());
  std::string create = std::string(kParent) + "/nodes?nodeId=d";
  Result<ClientResponse> op =
      c.Request("POST", create, R"({"acceleratorType":"v4-8","runtimeVersion":"v2-alpha"})");
  ASSERT_TRUE(op.ok());
  WaitOperation(c, op->Json()["name"]);
  std::string node = std::string(kParent) + "/nodes/d";
  ASSERT_EQ(c.Request("DELETE", node)->status, 200);
  EXPECT_EQ(c.Request("GET", node)->Json()["state"], "DELETING");
  for (auto [method, target] :
       std::vector<std::pair<std::string, std::string>>{{"POST", node + ":stop"},
                                                        {"POST", node + ":start"},
                                                        {"DELETE", node},
                                                        {"PATCH", node + "?updateMask=labels"}}) {
    Result<ClientResponse> r = c.Request(method, target, "{}");
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->status, 400) << method << " " << target;
    EXPECT_EQ(r->Json()["error"]["status"], "FAILED_PRECONDITION");
  }
}

TEST_F(NodesApiTest, PatchAcceptsSnakeAndCamelMasks) {
  CreateReady("p1");
  std::string node = std::string(kParent) + "/nodes/p1";
  json op =
      Call("PATCH", node + "?updateMask=description,labels,network_config.enable_external_ips",
           R"({"description":"new","labels":{"a":"b"},"networkConfig":{"enableExternalIps":true}})")
          .Json();
  json done = WaitOperation(client_, op["name"]);
  EXPECT_EQ(done["metadata"]["verb"], "update");
  json got = Call("GET", node).Json();
  EXPECT_EQ(got["description"], "new");
  EXPECT_EQ(got["labels"]["a"], "b");
  EXPECT_TRUE(got["networkEndpoints"][0]["accessConfig"].contains("externalIp"));
  WaitOperation(client_, Call("PATCH", node + "?updateMask=metadata,tags",
                              R"({"metadata":{"startup-script":"echo hi"},"tags":["x"]})")
                             .Json()["name"]);
  got = Call("GET", node).Json();
  EXPECT_EQ(got["metadata"]["startup-script"], "echo hi");
  EXPECT_EQ(got["description"], "new");  // not in the mask: untouched
  WaitOperation(client_,
                Call("PATCH", node + "?updateMask=dataDisks",
                     R"({"dataDisks":[{"sourceDisk":"projects/proj/zones/z/disks/d","mode":2}]})")
                    .Json()["name"]);
  EXPECT_EQ(Call("GET", node).Json()["dataDisks"][0]["mode"], "READ_ONLY");
  ExpectError(Call("PATCH", node + "?updateMask=runtime_version", "{}"), 400, "INVALID_ARGUMENT",
              "runtime_version");
  ExpectError(Call("PATCH", node, "{}"), 400, "INVALID_ARGUMENT", "updateMask");
}

TEST_F(NodesApiTest, GuestAttributesPerWorker) {
  CreateReady("ga", "v4-16");
  json r = Call("POST", std::string(kParent) + "/nodes/ga:getGuestAttributes",
                R"({"queryPath":"hostkeys/"})")
               .Json();
  ASSERT_EQ(r["guestAttributes"].size(), 2u);
  EXPECT_EQ(r["guestAttributes"][1]["queryValue"]["items"][0]["key"], "ssh-ed25519");
  ExpectError(
      Call("POST", std::string(kParent) + "/nodes/ga:getGuestAttributes", R"({"workerIds":[1]})"),
      400, "INVALID_ARGUMENT", "worker_ids");
}

TEST_F(NodesApiTest, ValidationErrorsUseGooglesEnvelope) {
  std::string nodes = std::string(kParent) + "/nodes";
  std::string ok_body = R"({"acceleratorType":"v4-8","runtimeVersion":"tpu-ubuntu2204-base"})";
  ExpectError(Call("POST", nodes + "?nodeId=Bad_Id", ok_body), 400, "INVALID_ARGUMENT", "nodeId");
  ExpectError(Call("POST", nodes, ok_body), 400, "INVALID_ARGUMENT", "nodeId");
  ExpectError(Call("POST", nodes + "?nodeId=x",
                   R"({"acceleratorType":"v9-8","runtimeVersion":"tpu-ubuntu2204-base"})"),
              400, "INVALID_ARGUMENT", "v9-8");
  ExpectError(Call("POST", nodes + "?nodeId=x",
                   R"({"acceleratorType":"v6e-8","runtimeVersion":"tpu-ubuntu2204-base"})"),
              400, "INVALID_ARGUMENT", "not available in zone 'us-central2-b'");
  ExpectError(Call("POST", nodes + "?nodeId=x",
                   R"({"acceleratorType":"v4-8","runtimeVersion":"tpu-vm-tf-0.0"})"),
              400, "INVALID_ARGUMENT", "runtimeVersion");
  ExpectError(Call("POST", nodes + "?nodeId=x", R"({"acceleratorType":"v4-8"})"), 400,
              "INVALID_ARGUMENT", "runtimeVersion");
  ExpectError(Call("POST", nodes + "?nodeId=x", R"({"acceleratorType":"v4-8",)"), 400,
              "INVALID_ARGUMENT", "Invalid JSON payload");
  ExpectError(
      Call("POST", nodes + "?nodeId=x", R"({"acceleratorType":8,"runtimeVersion":"v2-alpha"})"),
      400, "INVALID_ARGUMENT", "acceleratorType");
  ExpectError(Call("POST", nodes + "?nodeId=x",
                   R"({"acceleratorType":"v4-8","runtimeVersion":"v2-alpha","labels":{"a":1}})"),
              400, "INVALID_ARGUMENT", "labels[a]");
  ExpectError(
      Call(
          "POST", nodes + "?nodeId=x",
          R"({"acceleratorType":"v4-8","runtimeVersion":"v2-alpha","labels":{"test-name":"pt-r1.9"}})"),
      400, "INVALID_ARGUMENT", "invalid character '.'");
  ExpectError(Call("POST", nodes + "?nodeId=x", std::string(100, '[') + std::string(100, ']')), 400,
              "INVALID_ARGUMENT", "depth");
  CreateReady("dup");
  ExpectError(Call("POST", nodes + "?nodeId=dup", ok_body), 409, "ALREADY_EXISTS", "dup");
  ExpectError(Call("GET", "/v2/projects/proj/locations/mars-1/nodes"), 404, "NOT_FOUND", "mars-1");
}

TEST_F(NodesApiTest, KeyAndAuthorizationAreAcceptedAndIgnored) {
  ClientResponse r = Call("GET", std::string(kParent) + "/nodes?key=dummy&prettyPrint=false", "",
                          {{"Authorization", "Bearer abc"}});
  EXPECT_EQ(r.status, 200) << r.body;
}

TEST_F(NodesApiTest, CapacityFailsTheOperationWithCode8) {
  ApiServer small(
      {.provisioning_delay_ms = 0, .transition_delay_ms = 0, .zone_capacity_tensorcores = 8});
  HttpClient c("127.0.0.1", small.port());
  std::string nodes = std::string(kParent) + "/nodes";
  std::string body = R"({"acceleratorType":"v4-8","runtimeVersion":"tpu-ubuntu2204-base"})";
  WaitOperation(c, c.Request("POST", nodes + "?nodeId=a", body)->Json()["name"]);
  Result<ClientResponse> r = c.Request("POST", nodes + "?nodeId=b", body);
  ASSERT_EQ(r->status, 200);
  json op = WaitOperation(c, r->Json()["name"]);
  EXPECT_EQ(op["error"]["code"], 8);
  EXPECT_FALSE(op["error"].contains("status"));
  EXPECT_NE(op["error"]["message"].get<std::string>().find("There is no more capacity in the zone"),
            std::string::npos);
}

TEST_F(NodesApiTest, UnknownMethodsAndPaths) {
  EXPECT_EQ(Call("PUT", std::string(kParent) + "/nodes/x", "{}").status, 405);
  EXPECT_EQ(Call("GET", "/v2/nothing/here").status, 404);
}

TEST_F(NodesApiTest, HealthReadyAndReset) {
  EXPECT_EQ(Call("GET", "/healthz").status, 200);
  EXPECT_EQ(Call("GET", "/readyz").status, 200);
  CreateReady("gone");
  EXPECT_EQ(Call("POST", "/_emulator/reset").status, 200);
  EXPECT_EQ(Call("GET", std::string(kParent) + "/nodes/gone").status, 404);
  EXPECT_TRUE(Call("GET", std::string(kParent) + "/nodes").Json()["nodes"].empty());
}

// Issue 26 item 5: while the store is behind (a due transition waited longer than
// max_write_lag_ms; issue 44: queued client writes alone do not count), node writes are pushed back
// with 429 RESOURCE_EXHAUSTED and a google.rpc.RetryInfo, rather than joining the backlog the
// transitions wait behind; writes pass once it drained. The batcher is held by a body of the
// test's own (no timing involved).
TEST(NodesBackpressureTest, WritesGet429WithRetryInfoWhileTheStoreIsBehind) {
  daemon::AppOptions options{
      .nodes = {.provisioning_delay_ms = 0, .transition_delay_ms = 0, .max_write_lag_ms = 5},
      .queued_resources = {.accept_delay_ms = 0, .transition_delay_ms = 0},
      .observability = {.utilization_interval_ms = 0}};
  ApiServer server(std::move(options));
  HttpClient client("127.0.0.1", server.port());
  const std::string body = R"({"acceleratorType":"v4-8","runtimeVersion":"tpu-ubuntu2204-base"})";
  std::promise<void> release, holding;
  std::shared_future<void> released = release.get_future().share();
  service::WriteBatcher& batcher = server.app().write_path().batcher();
  batcher.Submit(
      [&](db::Txn&) {
        holding.set_value();
        released.wait();
        return Status::Ok();
      },
      nullptr, nullptr);
  holding.get_future().wait();
  // A client write waiting behind it is not a lag yet; a due transition waiting behind it is.
  batcher.Submit([](db::Txn&) { return Status::Ok(); }, nullptr, nullptr);
  EXPECT_TRUE(WaitFor([&] { return batcher.QueueDelayMs(/*urgent=*/false) > 5; }));
  EXPECT_FALSE(server.nodes().WriteBacklog().has_value());
  batcher.Submit([](db::Txn&) { return Status::Ok(); }, nullptr, nullptr, /*urgent=*/true);
  ASSERT_TRUE(WaitFor([&] { return server.nodes().WriteBacklog().has_value(); }));

  for (const std::string& target : {std::string(kParent) + "/nodes?nodeId=a",
                                    std::string(kParent) + "/queuedResources?queuedResourceId=q"}) {
    Result<ClientResponse> r = client.Request("POST", target, body);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->status, 429) << r->body;
    const json error = r->Json()["error"];
    EXPECT_EQ(error["status"], "RESOURCE_EXHAUSTED");
    EXPECT_NE(error["message"].get<std::string>().find("retry after"), std::string::npos);
    bool retry_info = false;
    for (const json& d : error["details"]) {
      if (d.value("@type", "") == "type.googleapis.com/google.rpc.RetryInfo") {
        retry_info = d["retryDelay"].get<std::string>().ends_with("s");
      }
    }
    EXPECT_TRUE(retry_info) << r->body;
    EXPECT_FALSE(r->Header("retry-after").empty());
  }
  release.set_value();
  ASSERT_TRUE(WaitFor([&] { return !server.nodes().WriteBacklog().has_value(); }));
  Result<ClientResponse> created =
      client.Request("POST", std::string(kParent) + "/nodes?nodeId=a", body);
  ASSERT_TRUE(created.ok());
  EXPECT_EQ(created->status, 200) << created->body;
}

}  // namespace
}  // namespace tpuemu::testing
