#include "api/metadata_server.h"

#include <gtest/gtest.h>

namespace tpuemu::api {
namespace {

using nlohmann::json;

json Tree() {
  return {{"instance",
           {{"attributes", {{"agent-worker-number", "1"}, {"tpu-env", "WORKER_ID: '1'\n"}}},
            {"hostname", "t1v-n-12345678-w-1.z.c.p.internal"},
            {"network-interfaces", {{"0", {{"ip", "127.0.3.3"}}}}},
            {"preempted", "FALSE"}}},
          {"project", {{"project-id", "p"}, {"numeric-project-id", "123456789012"}}}};
}

HttpRequest Get(const std::string& path, std::multimap<std::string, std::string> query = {},
                bool flavor = true) {
  HttpRequest r;
  r.method = "GET";
  r.path = path;
  r.target = path;
  r.query = std::move(query);
  if (flavor) r.headers["metadata-flavor"] = "Google";
  return r;
}

std::string Header(const HttpResponse& r, const std::string& name) {
  for (const auto& [k, v] : r.headers) {
    if (k == name) return v;
  }
  return "";
}

TEST(MetadataServerTest, ValuesNeedTheFlavorHeaderAndEchoIt) {
  HttpResponse r =
      AnswerMetadata(Tree(), Get("/computeMetadata/v1/instance/attributes/agent-worker-number"));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "1");
  EXPECT_EQ(Header(r, "Metadata-Flavor"), "Google");
  EXPECT_FALSE(Header(r, "ETag").empty());
  EXPECT_EQ(AnswerMetadata(Tree(), Get("/computeMetadata/v1/instance/preempted", {}, false)).status,
            403);
  HttpRequest forwarded = Get("/computeMetadata/v1/instance/preempted");
  forwarded.headers["x-forwarded-for"] = "1.2.3.4";
  EXPECT_EQ(AnswerMetadata(Tree(), forwarded).status, 403);
  EXPECT_EQ(AnswerMetadata(Tree(), Get("/computeMetadata/v1/instance/nope")).status, 404);
  HttpRequest post = Get("/computeMetadata/v1/instance/preempted");
  post.method = "POST";
  EXPECT_EQ(AnswerMetadata(Tree(), post).status, 405);
}

TEST(MetadataServerTest, DirectoriesListAndRecurse) {
  HttpResponse list = AnswerMetadata(Tree(), Get("/computeMetadata/v1/instance/"));
  EXPECT_EQ(list.body, "attributes/\nhostname\nnetwork-interfaces/\npreempted\n");
  HttpResponse rec =
      AnswerMetadata(Tree(), Get("/computeMetadata/v1/instance/", {{"recursive", "true"}}));
  json j = json::parse(rec.body);
  EXPECT_EQ(j["networkInterfaces"][0]["ip"], "127.0.3.3");  // camelCase, numbered dirs as lists
  EXPECT_EQ(j["attributes"]["agent-worker-number"], "1");   // attribute keys as given
  HttpResponse attrs = AnswerMetadata(
      Tree(), Get("/computeMetadata/v1/instance/attributes/", {{"recursive", "true"}}));
  EXPECT_EQ(json::parse(attrs.body)["tpu-env"], "WORKER_ID: '1'\n");
  HttpResponse alt =
      AnswerMetadata(Tree(), Get("/computeMetadata/v1/project/project-id", {{"alt", "json"}}));
  EXPECT_EQ(alt.body, "\"p\"");
}

TEST(MetadataServerTest, TokenIsAFakeBearerToken) {
  HttpResponse r =
      AnswerMetadata(Tree(), Get("/computeMetadata/v1/instance/service-accounts/default/token"));
  json j = json::parse(r.body);
  EXPECT_EQ(j["token_type"], "Bearer");
  EXPECT_GT(j["expires_in"].get<int>(), 0);
  EXPECT_FALSE(j["access_token"].get<std::string>().empty());
}

}  // namespace
}  // namespace tpuemu::api
