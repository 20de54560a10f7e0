// The API versions beside v2 through real HTTP: the v2alpha1 surface gcloud's alpha track uses,
// the legacy v1 catalog (`gcloud compute tpus accelerator-types|versions list`), snake_case
// bodies, and the discovery document.
#include <gtest/gtest.h>

#include "tests/e2e/api_test_client.h"

namespace tpuemu::testing {
namespace {

using nlohmann::json;

constexpr char kV5eZone[] = "us-central1-a";  // offers v5e
const std::string kV5eAlpha = std::string("/v2alpha1/projects/proj/locations/") + kV5eZone;

class ApiVersionsTest : public ::testing::Test {
 protected:
  ApiServer server_;
  ApiTestClient api_{server_.port()};
};

TEST_F(ApiVersionsTest, V2Alpha1ServesNodesOperationsAndTheCatalog) {
  // snake_case proto names are accepted, as Google's JSON parser accepts them.
  ClientResponse created = api_.Call("POST", kV5eAlpha + "/nodes?nodeId=alpha&requestId=abc",
                                     json{{"accelerator_type", "v5litepod-4"},
                                          {"runtime_version", "v2-alpha-tpuv5-lite"},
                                          {"network_config", {{"enable_external_ips", true}}},
                                          {"labels", {{"snake_key", "v"}}}});
  ASSERT_EQ(created.status, 200) << created.body;
  json op = api_.Finish(created);
  EXPECT_EQ(op["metadata"]["@type"],
            "type.googleapis.com/google.cloud.tpu.v2alpha1.OperationMetadata");
  EXPECT_EQ(op["metadata"]["apiVersion"], "v2alpha1");
  EXPECT_EQ(op["response"]["@type"], "type.googleapis.com/google.cloud.tpu.v2alpha1.Node");
  json node = api_.Get(kV5eAlpha + "/nodes/alpha");
  EXPECT_EQ(node["acceleratorType"], "v5litepod-4");
  EXPECT_EQ(node["networkConfig"]["enableExternalIps"], true);
  EXPECT_EQ(node["labels"]["snake_key"], "v");
  EXPECT_EQ(api_.Get(kV5eAlpha + "/nodes")["nodes"].size(), 1u);
  // The same Operation read through v2 carries v2's types.
  json v2op = api_.Get("/v2/" + op["name"].get<std::string>());
  EXPECT_EQ(v2op["metadata"]["@type"], "type.googleapis.com/google.cloud.tpu.v2.OperationMetadata");
  EXPECT_FALSE(api_.Get(kV5eAlpha + "/operations")["operations"].empty());
  EXPECT_FALSE(api_.Get(kV5eAlpha + "/acceleratorTypes")["acceleratorTypes"].empty());
  EXPECT_FALSE(api_.Get(kV5eAlpha + "/runtimeVersions")["runtimeVersions"].empty());
  EXPECT_EQ(api_.Get("/v2alpha1/projects/proj/locations/" + std::string(kV5eZone))["locationId"],
            kV5eZone);
  ClientResponse attributes =
      api_.Call("POST", kV5eAlpha + "/nodes/alpha:getGuestAttributes", json{{"query_path", ""}});
  EXPECT_EQ(attributes.status, 200) << attributes.body;
  EXPECT_EQ(api_.Get(kV5eAlpha + "/reservations")["reservations"].size(), 0u);
  api_.Finish(api_.Call("DELETE", kV5eAlpha + "/nodes/alpha?requestId=def"));
}

TEST_F(ApiVersionsTest, LegacyV1CatalogForTheOldGcloudWords) {
  json types =
      api_.Get(std::string("/v1/projects/proj/locations/") + kV5eZone + "/acceleratorTypes");
  ASSERT_FALSE(types["acceleratorTypes"].empty());
  EXPECT_TRUE(types["acceleratorTypes"][0].contains("type"));
  EXPECT_EQ(api_.Get(std::string("/v1/projects/proj/locations/") + kV5eZone +
                     "/acceleratorTypes/v5litepod-4")["type"],
            "v5litepod-4");
  json versions =
      api_.Get(std::string("/v1/projects/proj/locations/") + kV5eZone + "/tensorflowVersions");
  std::vector<std::string> names;
  for (const json& v : versions["tensorflowVersions"]) names.push_back(v["version"]);
  EXPECT_NE(std::find(names.begin(), names.end(), "2.16.1"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "pytorch-1.13"), names.end());
  EXPECT_EQ(api_.Get(std::string("/v1/projects/proj/locations/") + kV5eZone +
                     "/tensorflowVersions/2.16.1")["name"],
            std::string("projects/proj/locations/") + kV5eZone + "/tensorflowVersions/2.16.1");
  EXPECT_EQ(api_.Call("GET", std::string("/v1/projects/proj/locations/") + kV5eZone +
                                 "/tensorflowVersions/9.9")
                .status,
            404);
}

TEST_F(ApiVersionsTest, DiscoveryDocumentPointsBackAtTpuemu) {
  ClientResponse v2 = api_.Call("GET", "/$discovery/rest?version=v2");
  ASSERT_EQ(v2.status, 200) << v2.body;
  json doc = v2.Json();
  const std::string root = "http://127.0.0.1:" + std::to_string(server_.port()) + "/";
  EXPECT_EQ(doc["rootUrl"], root);
  EXPECT_EQ(doc["id"], "tpu:v2");
  json nodes = doc["resources"]["projects"]["resources"]["locations"]["resources"]["nodes"];
  EXPECT_EQ(nodes["methods"]["create"]["path"], "v2/{+parent}/nodes");
  EXPECT_EQ(nodes["methods"]["create"]["parameters"]["parent"]["pattern"],
            "^projects/[^/]+/locations/[^/]+$");
  EXPECT_FALSE(nodes["methods"].contains("simulateMaintenanceEvent"));
  json qrs = doc["resources"]["projects"]["resources"]["locations"]["resources"]["queuedResources"];
  EXPECT_EQ(qrs["methods"]["delete"]["parameters"]["force"]["type"], "boolean");
  EXPECT_TRUE(doc["schemas"]["NodeSpec"]["properties"].contains("multisliceParams"));
  // Ray asks for "v2alpha"; axlearn for "v2alpha1".
  json alpha = api_.Get("/$discovery/rest?version=v2alpha");
  EXPECT_EQ(alpha["id"], "tpu:v2alpha1");
  json alpha_nodes = alpha["resources"]["projects"]["resources"]["locations"]["resources"]["nodes"];
  EXPECT_EQ(alpha_nodes["methods"]["simulateMaintenanceEvent"]["path"],
            "v2alpha1/{+name}:simulateMaintenanceEvent");
  EXPECT_TRUE(alpha["schemas"]["NodeSpec"]["properties"].contains("multiNodeParams"));
  EXPECT_TRUE(alpha["schemas"].contains("UpcomingMaintenance"));
  EXPECT_EQ(api_.Get("/discovery/v1/apis/tpu/v2/rest")["id"], "tpu:v2");
  ExpectApiError(api_.Call("GET", "/$discovery/rest?version=v9"), 404, "NOT_FOUND", "v9");
}

}  // namespace
}  // namespace tpuemu::testing
