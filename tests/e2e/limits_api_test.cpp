// Limits a client cannot get past, through real HTTP (issue 8 item 1): JSON depth, size and value
// count on every body the API parses (nodes create/patch, jobs submit), tensor element counts of
// every workload and of programs, and the per-project TensorCore quota (429 RESOURCE_EXHAUSTED).
#include <gtest/gtest.h>

#include "api/api_common.h"
#include "tests/e2e/api_paths.h"
#include "tests/e2e/api_server.h"

namespace tpuemu::testing {
namespace {

using nlohmann::json;

class LimitsApiTest : public ::testing::Test {
 protected:
  explicit LimitsApiTest(service::NodeManagerOptions options = {.provisioning_delay_ms = 0,
                                                                .transition_delay_ms = 0})
      : server_(options, HttpOptions()) {}

  static api::HttpServerOptions HttpOptions() {
    api::HttpServerOptions http;
    http.body_limit_bytes = 16 << 20;  // so the JSON limits, not the HTTP one, are what trips
    return http;
  }

  ClientResponse Call(const std::string& method, const std::string& target,
                      const std::string& body = "") {
    Result<ClientResponse> r = client_.Request(method, target, body);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : ClientResponse{};
  }
  void CreateReady(const std::string& id, const std::string& project = "proj") {
    ClientResponse r =
        Call("POST", "/v2/projects/" + project + "/locations/us-central2-b/nodes?nodeId=" + id,
             kNodeBody);
    ASSERT_EQ(r.status, 200) << r.body;
    ASSERT_FALSE(WaitOperation(client_, r.Json()["name"]).is_null());
  }
  // Asserts a 400 INVALID_ARGUMENT whose message contains `needle`.
  void ExpectInvalid(const ClientResponse& r, const std::string& needle) {
    EXPECT_EQ(r.status, 400) << r.body;
    json body = r.Json();
    EXPECT_EQ(body["error"]["status"], "INVALID_ARGUMENT") << r.body;
    EXPECT_NE(body["error"].value("message", "").find(needle), std::string::npos) << r.body;
  }

  ApiServer server_;
  HttpClient client_{"127.0.0.1", server_.port(), std::chrono::seconds(30)};
};

std::string Nested(int depth) {
  return R"({"labels":)" + std::string(depth, '[') + std::string(depth, ']') + "}";
}

std::string ManyValues(std::size_t n) {
  std::string out = R"({"tags":[)";
  out.reserve(n * 2 + 16);
  for (std::size_t i = 0; i < n; ++i) out += i ? ",0" : "0";
  return out + "]}";
}

TEST_F(LimitsApiTest, JsonDepthIsCheckedOnEveryBody) {
  CreateReady("n1");
  const std::string deep = Nested(api::kMaxJsonDepth + 10);
  ExpectInvalid(Call("POST", std::string(kParent) + "/nodes?nodeId=n2", deep), "Nesting depth");
  ExpectInvalid(Call("PATCH", std::string(kParent) + "/nodes/n1?updateMask=labels", deep),
                "Nesting depth");
  ExpectInvalid(Call("POST", std::string(kParent) + "/nodes/n1/jobs", deep), "Nesting depth");
  // A program nested too deep is refused before the parser sees it.
  std::string deep_program =
      R"({"program":{"ops":)" + std::string(200, '[') + std::string(200, ']') + "}}";
  ExpectInvalid(Call("POST", std::string(kParent) + "/nodes/n1/jobs", deep_program),
                "Nesting depth");
  // Just inside the limit is parsed (then refused for its content, not its depth).
  ClientResponse ok_depth =
      Call("POST", std::string(kParent) + "/nodes/n1/jobs", Nested(api::kMaxJsonDepth - 1));
  EXPECT_EQ(ok_depth.status, 400);
  EXPECT_EQ(ok_depth.body.find("Nesting depth"), std::string::npos) << ok_depth.body;
  // A body that is not an object, or not JSON, is refused by the same parser.
  ExpectInvalid(Call("POST", std::string(kParent) + "/nodes/n1/jobs", "[1,2]"),
                "Expected an object");
  ExpectInvalid(Call("POST", std::string(kParent) + "/nodes/n1/jobs", "{\"workload\":"),
                "Invalid JSON payload");
}

TEST_F(LimitsApiTest, JsonValueCountIsCheckedOnEveryBody) {
  CreateReady("n1");
  const std::string huge = ManyValues(api::JsonLimits{}.max_values + 1);
  ExpectInvalid(Call("POST", std::string(kParent) + "/nodes?nodeId=n2", huge), "values");
  ExpectInvalid(Call("POST", std::string(kParent) + "/nodes/n1/jobs", huge), "values");
  // Nothing of it was created.
  EXPECT_EQ(Call("GET", std::string(kParent) + "/nodes/n2").status, 404);
}

TEST(JsonBodyParser, SizeAndValueLimitsNameTheLimit) {
  api::JsonLimits limits{.max_depth = 3, .max_bytes = 64, .max_values = 4};
  EXPECT_TRUE(api::ParseBody(R"({"a":[1,2]})", limits).ok());
  Result<json> big = api::ParseBody(R"({"a":")" + std::string(100, 'x') + R"("})", limits);
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.status().message().find("above the limit of 64"), std::string::npos);
  Result<json> many = api::ParseBody(R"({"a":[1,2,3,4,5]})", limits);
  ASSERT_FALSE(many.ok());
  EXPECT_NE(many.status().message().find("values"), std::string::npos);
  // Brackets and commas inside strings do not count.
  EXPECT_TRUE(api::ParseBody(R"({"a":"[[[[,,,,,,"})", limits).ok());
  Result<json> deep = api::ParseBody(R"({"a":[[[1]]]})", limits);
  ASSERT_FALSE(deep.ok());
  EXPECT_NE(deep.status().message().find("Nesting depth 4"), std::string::npos);
  EXPECT_TRUE(api::ParseBody("  \n").ok());
}

TEST_F(LimitsApiTest, TensorElementLimitCoversEveryWorkloadAndPrograms) {
  CreateReady("n1");
  const std::string jobs = std::string(kParent) + "/nodes/n1/jobs";
  // Default JobLimits.max_tensor_elements is 2^24.
  ExpectInvalid(Call("POST", jobs, R"({"workload":{"matmul":{"m":65536,"n":512,"k":512}}})"),
                "above the limit of 16777216");
  ExpectInvalid(Call("POST", jobs, R"({"workload":{"mlp":{"batch":65536,"hidden":8192}}})"),
                "above the limit of 16777216");
  ExpectInvalid(Call("POST", jobs, R"({"workload":{"cnn":{"batch":4096,"channels":256}}})"),
                "above the limit of 16777216");
  // A program: a declared shape over the limit, and an op whose RESULT is over it.
  ExpectInvalid(Call("POST", jobs, R"({"program":{"name":"big","ops":[
      {"id":"x","op":"parameter","shape":[8192,4096],"dtype":"f32"}],"outputs":["x"]}})"),
                "program:");
  ExpectInvalid(Call("POST", jobs, R"({"program":{"name":"outer","ops":[
      {"id":"a","op":"parameter","shape":[8192,1]},
      {"id":"b","op":"parameter","shape":[1,8192]},
      {"id":"c","op":"dot","inputs":["a","b"]}],"outputs":["c"]}})"),
                "program:");
  // The same shapes inside the limit are accepted.
  EXPECT_EQ(
      Call("POST", jobs, R"({"workload":{"cnn":{"batch":16,"channels":8,"steps":1}}})").status,
      200);
}

class QuotaApiTest : public LimitsApiTest {
 protected:
  QuotaApiTest()
      : LimitsApiTest({.provisioning_delay_ms = 0,
                       .transition_delay_ms = 0,
                       .project_quota_tensorcores = 16}) {}
};

TEST_F(QuotaApiTest, CreatePastTheProjectQuotaIs429InGooglesFormat) {
  // v4-8 has 8 TensorCores: two fit in a quota of 16, the third does not.
  CreateReady("a");
  CreateReady("b");
  ClientResponse over = Call("POST", std::string(kParent) + "/nodes?nodeId=c", kNodeBody);
  EXPECT_EQ(over.status, 429) << over.body;
  json error = over.Json()["error"];
  EXPECT_EQ(error["code"], 429);
  EXPECT_EQ(error["status"], "RESOURCE_EXHAUSTED");
  EXPECT_NE(error.value("message", "").find("Quota 'TPU_TENSORCORES_PER_PROJECT' exceeded"),
            std::string::npos)
      << over.body;
  EXPECT_NE(error.value("message", "").find("Limit: 16 in project proj"), std::string::npos);
  EXPECT_EQ(Call("GET", std::string(kParent) + "/nodes/c").status, 404);  // nothing created
  // The quota is per project: another project still has its own 16.
  CreateReady("a", "other-proj");
  // And a delete gives the TensorCores back (counted until the node is gone).
  ClientResponse del = Call("DELETE", std::string(kParent) + "/nodes/a");
  ASSERT_EQ(del.status, 200) << del.body;
  ASSERT_FALSE(WaitOperation(client_, del.Json()["name"]).is_null());
  CreateReady("c");
  EXPECT_EQ(Call("POST", std::string(kParent) + "/nodes?nodeId=d", kNodeBody).status, 429);
}

TEST_F(QuotaApiTest, QuotaCountsEveryZoneAndResetFreesIt) {
  CreateReady("a");  // v4-8: 8 TensorCores in us-central2-b
  // v2-8 (8 TensorCores each) in two other zones: the first fits (16), the second does not.
  const std::string body = R"({"acceleratorType":"v2-8","runtimeVersion":"tpu-vm-base"})";
  const std::string zone_b = "/v2/projects/proj/locations/us-central1-b/nodes?nodeId=v2";
  const std::string zone_c = "/v2/projects/proj/locations/us-central1-c/nodes?nodeId=v2";
  ClientResponse fits = Call("POST", zone_b, body);
  EXPECT_EQ(fits.status, 200) << fits.body;
  ClientResponse over = Call("POST", zone_c, body);
  EXPECT_EQ(over.status, 429) << over.body;
  EXPECT_NE(over.body.find("in use: 16"), std::string::npos) << over.body;
  ASSERT_EQ(Call("POST", "/_emulator/reset").status, 200);
  ClientResponse after_reset = Call("POST", zone_c, body);
  EXPECT_EQ(after_reset.status, 200) << after_reset.body;
}

}  // namespace
}  // namespace tpuemu::testing
