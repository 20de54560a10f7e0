// acceleratorTypes, runtimeVersions, locations and operations.* through real HTTP.
#include <gtest/gtest.h>

#include "tests/e2e/api_server.h"

namespace tpuemu::testing {
namespace {

using nlohmann::json;

class CatalogApiTest : public ::testing::Test {
 protected:
  json Get(const std::string& target, int expect = 200) {
    Result<ClientResponse> r = client_.Request("GET", target);
    EXPECT_TRUE(r.ok());
    EXPECT_EQ(r->status, expect) << target << " " << r->body;
    return r->Json();
  }
  ApiServer server_;
  HttpClient client_{"127.0.0.1", server_.port()};
};

TEST_F(CatalogApiTest, AcceleratorTypesPerZone) {
  json v6 = Get("/v2/projects/p/locations/us-east1-d/acceleratorTypes");
  ASSERT_EQ(v6["acceleratorTypes"].size(), 8u);
  EXPECT_EQ(v6["acceleratorTypes"][0]["type"], "v6e-1");
  EXPECT_EQ(v6["acceleratorTypes"][0]["acceleratorConfigs"][0],
            (json{{"type", "V6E"}, {"topology", "1x1"}}));
  json v5p = Get("/v2/projects/p/locations/us-east5-a/acceleratorTypes/v5p-12288");
  EXPECT_EQ(v5p["acceleratorConfigs"][0]["topology"], "16x16x24");
  EXPECT_EQ(v5p["name"], "projects/p/locations/us-east5-a/acceleratorTypes/v5p-12288");
  Get("/v2/projects/p/locations/us-east1-d/acceleratorTypes/v4-8", 404);
  Get("/v2/projects/p/locations/nowhere-1a/acceleratorTypes", 404);
  json filtered =
      Get("/v2/projects/p/locations/us-central2-b/acceleratorTypes?filter=type%3D%22v4-8%22");
  ASSERT_EQ(filtered["acceleratorTypes"].size(), 1u);
  json ordered =
      Get("/v2/projects/p/locations/us-central2-b/acceleratorTypes?orderBy=type%20desc&pageSize=1");
  EXPECT_EQ(ordered["acceleratorTypes"][0]["type"], "v4-8");  // string order, descending
  EXPECT_EQ(ordered["nextPageToken"], "o1");
  Get("/v2/projects/p/locations/us-central2-b/acceleratorTypes?filter=type%3D", 400);
}

TEST_F(CatalogApiTest, EveryZoneListsEveryTypeOfItsGenerations) {
  json locations = Get("/v2/projects/p/locations");
  int total = 0;
  for (const json& loc : locations["locations"]) {
    json types = Get("/v2/projects/p/locations/" + loc["locationId"].get<std::string>() +
                     "/acceleratorTypes");
    EXPECT_FALSE(types["acceleratorTypes"].empty()) << loc["locationId"];
    total += static_cast<int>(types["acceleratorTypes"].size());
  }
  EXPECT_GT(total, 60);
}

TEST_F(CatalogApiTest, RuntimeVersions) {
  json list = Get("/v2/projects/p/locations/us-central1-a/runtimeVersions");
  EXPECT_GE(list["runtimeVersions"].size(), 10u);
  json one = Get("/v2/projects/p/locations/us-central1-a/runtimeVersions/v2-alpha-tpuv5-lite");
  EXPECT_EQ(one["version"], "v2-alpha-tpuv5-lite");
  Get("/v2/projects/p/locations/us-central1-a/runtimeVersions/nope", 404);
}

TEST_F(CatalogApiTest, LocationsUnderV2AndV1) {
  for (const char* v : {"v2", "v1"}) {
    json list = Get(std::string("/") + v + "/projects/p/locations");
    EXPECT_GE(list["locations"].size(), 15u);
    json one = Get(std::string("/") + v + "/projects/p/locations/us-central2-b");
    EXPECT_EQ(one["locationId"], "us-central2-b");
    EXPECT_EQ(one["name"], "projects/p/locations/us-central2-b");
    Get(std::string("/") + v + "/projects/p/locations/atlantis-1a", 404);
  }
  Result<ClientResponse> identity = client_.Request(
      "POST", "/v2/projects/p/locations/us-central2-b:generateServiceIdentity", "{}");
  EXPECT_TRUE(identity->Json()["identity"]["email"].get<std::string>().ends_with(
      "@cloud-tpu.iam.gserviceaccount.com"));
}

TEST_F(CatalogApiTest, OperationsGetListCancelDelete) {
  ApiServer slow({.provisioning_delay_ms = 60000, .transition_delay_ms = 0});
  HttpClient c("127.0.0.1", slow.port());
  json op = c.Request("POST", "/v2/projects/p/locations/us-central2-b/nodes?nodeId=o",
                      R"({"acceleratorType":"v4-8","runtimeVersion":"tpu-ubuntu2204-base"})")
                ->Json();
  std::string name = op["name"];
  for (const char* version : {"v2", "v1"}) {
    json got = c.Request("GET", std::string("/") + version + "/" + name)->Json();
    EXPECT_EQ(got["name"], name);
    EXPECT_FALSE(got.value("done", false));
  }
  json list = c.Request("GET", "/v2/projects/p/locations/us-central2-b/operations")->Json();
  ASSERT_EQ(list["operations"].size(), 1u);
  Result<ClientResponse> del = c.Request("DELETE", "/v2/" + name);
  EXPECT_EQ(del->status, 400);
  EXPECT_EQ(del->Json()["error"]["status"], "FAILED_PRECONDITION");
  Result<ClientResponse> cancel = c.Request("POST", "/v2/" + name + ":cancel");
  EXPECT_EQ(cancel->status, 200);
  EXPECT_EQ(cancel->Json(), json::object());
  EXPECT_EQ(c.Request("GET", "/v2/" + name)->Json()["metadata"]["cancelRequested"], true);
  EXPECT_EQ(c.Request("GET", "/v2/" + name + "x")->status, 404);

  // A finished operation can be deleted.
  std::string done_name =
      client_
          .Request("POST", "/v2/projects/p/locations/us-central2-b/nodes?nodeId=q",
                   R"({"acceleratorType":"v4-8","runtimeVersion":"tpu-ubuntu2204-base"})")
          ->Json()["name"];
  ASSERT_FALSE(WaitOperation(client_, done_name).is_null());
  EXPECT_EQ(client_.Request("DELETE", "/v2/" + done_name)->status, 200);
  EXPECT_EQ(client_.Request("GET", "/v2/" + done_name)->status, 404);
}

}  // namespace
}  // namespace tpuemu::testing
