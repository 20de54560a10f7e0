#include "api/router.h"

#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <thread>

#include <gtest/gtest.h>

namespace tpuemu::api {
namespace {

constexpr char kNode[] = "/v2/projects/{project}/locations/{location}/nodes/{node}";

HttpResponse Echo(const std::string& what, const PathParams& params) {
  nlohmann::json body = {{"handler", what}};
  for (const auto& [key, value] : params) body["params"][key] = value;
  return JsonResponse(200, body);
}

nlohmann::json Body(const HttpResponse& response) { return nlohmann::json::parse(response.body); }

class RouterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    router_.Add("GET", "/healthz",
                [](const HttpRequest&, const PathParams& p) { return Echo("healthz", p); });
    router_.Add("GET", kNode,
                [](const HttpRequest&, const PathParams& p) { return Echo("get", p); });
    router_.Add("DELETE", kNode,
                [](const HttpRequest&, const PathParams& p) { return Echo("delete", p); });
    router_.Add("POST", std::string(kNode) + ":start",
                [](const HttpRequest&, const PathParams& p) { return Echo("start", p); });
    router_.Add("POST", "/v2/projects/{project}/locations/{location}/nodes",
                [](const HttpRequest& r, const PathParams& p) {
                  HttpResponse response = Echo("create", p);
                  response.headers.emplace_back("X-Node-Id", r.Query("nodeId").value_or(""));
                  return response;
                });
  }
  Router router_;
};

TEST_F(RouterTest, ExactPathMatches) {
  HttpResponse response = router_.Handle(MakeRequest("GET", "/healthz"));
  EXPECT_EQ(response.status, 200);
  EXPECT_EQ(Body(response)["handler"], "healthz");
  EXPECT_EQ(response.route, "/healthz");
}

TEST_F(RouterTest, TemplateBindsVariablesAndLabelsWithPattern) {
  HttpResponse response =
      router_.Handle(MakeRequest("GET", "/v2/projects/p1/locations/us-central1-a/nodes/n-1"));
  ASSERT_EQ(response.status, 200);
  nlohmann::json body = Body(response);
  EXPECT_EQ(body["handler"], "get");
  EXPECT_EQ(body["params"]["project"], "p1");
  EXPECT_EQ(body["params"]["location"], "us-central1-a");
  EXPECT_EQ(body["params"]["node"], "n-1");
  EXPECT_EQ(response.route, kNode);
}

TEST_F(RouterTest, MethodSelectsHandlerOnSamePattern) {
  HttpResponse response =
      router_.Handle(MakeRequest("DELETE", "/v2/projects/p/locations/z/nodes/n"));
  EXPECT_EQ(Body(response)["handler"], "delete");
}

TEST_F(RouterTest, CustomVerbRoutesToVerbPatternOnly) {
  HttpResponse start =
      router_.Handle(MakeRequest("POST", "/v2/projects/p/locations/z/nodes/n:start"));
  ASSERT_EQ(start.status, 200);
  EXPECT_EQ(Body(start)["handler"], "start");
  EXPECT_EQ(Body(start)["params"]["node"], "n");
  EXPECT_EQ(start.route, std::string(kNode) + ":start");

  // {node} must not swallow ":start": GET on the verb path is not the plain node route, so the
  // verb route reports 405 (it exists for POST only).
  HttpResponse get = router_.Handle(MakeRequest("GET", "/v2/projects/p/locations/z/nodes/n:start"));
  EXPECT_EQ(get.status, 405);
  // An unknown verb matches nothing at all.
  HttpResponse unknown =
      router_.Handle(MakeRequest("POST", "/v2/projects/p/locations/z/nodes/n:explode"));
  EXPECT_EQ(unknown.status, 404);
}

TEST_F(RouterTest, QueryIsDecodedAndSeparateFromPath) {
  HttpResponse response = router_.Handle(
      MakeRequest("POST", "/v2/projects/p/locations/z/nodes?nodeId=my%2Dnode&x=a+b", "{}"));
  ASSERT_EQ(response.status, 200);
  EXPECT_EQ(Body(response)["handler"], "create");
  ASSERT_EQ(response.headers.size(), 1u);
  EXPECT_EQ(response.headers[0].second, "my-node");
  HttpRequest request = MakeRequest("GET", "/a?x=a+b&x=2&y=%41%zz");
  EXPECT_EQ(request.path, "/a");
  EXPECT_EQ(request.query.count("x"), 2u);
  EXPECT_EQ(request.Query("x"), "a b");
  EXPECT_EQ(request.Query("y"), "A%zz");
  EXPECT_EQ(request.Query("missing"), std::nullopt);
}

TEST_F(RouterTest, EncodedSlashStaysInsideOneSegment) {
  HttpResponse response =
      router_.Handle(MakeRequest("GET", "/v2/projects/p/locations/z/nodes/a%2Fb"));
  ASSERT_EQ(response.status, 200);
  EXPECT_EQ(Body(response)["params"]["node"], "a/b");
}

TEST_F(RouterTest, UnknownPathIs404InGoogleEnvelope) {
  HttpResponse response = router_.Handle(MakeRequest("GET", "/v2/projects/p/nothing"));
  EXPECT_EQ(response.status, 404);
  EXPECT_EQ(response.route, "");
  EXPECT_EQ(Body(response)["error"]["status"], "NOT_FOUND");
  // Empty segments never bind a variable.
  EXPECT_EQ(router_.Handle(MakeRequest("GET", "/v2/projects//locations/z/nodes/n")).status, 404);
}

TEST_F(RouterTest, WrongMethodIs405WithAllowHeader) {
  HttpResponse response = router_.Handle(MakeRequest("PUT", "/v2/projects/p/locations/z/nodes/n"));
  EXPECT_EQ(response.status, 405);
  EXPECT_EQ(Body(response)["error"]["code"], 405);
  ASSERT_EQ(response.headers.size(), 1u);
  EXPECT_EQ(response.headers[0].first, "Allow");
  EXPECT_EQ(response.headers[0].second, "DELETE, GET");
  EXPECT_EQ(router_.Handle(MakeRequest("POST", "/healthz")).status, 405);
}

TEST_F(RouterTest, ThrowingHandlerGives500Envelope) {
  router_.Add("GET", "/boom/{id}", [](const HttpRequest&, const PathParams&) -> HttpResponse {
    throw std::runtime_error("kaput");
  });
  HttpResponse response = router_.Handle(MakeRequest("GET", "/boom/1"));
  EXPECT_EQ(response.status, 500);
  EXPECT_EQ(Body(response)["error"]["status"], "INTERNAL");
  EXPECT_EQ(response.route, "/boom/{id}");
}

TEST_F(RouterTest, AsyncRouteAnsweredFromAnotherThread) {
  std::thread worker;
  router_.AddAsync("POST", kNode + std::string(":wait"),
                   [&worker](const HttpRequest&, const PathParams& p, Responder respond) {
                     std::string node = p.at("node");
                     worker = std::thread([respond, node] {
                       respond(JsonResponse(200, nlohmann::json{{"done", node}}));
                     });
                   });
  HttpResponse response =
      router_.Handle(MakeRequest("POST", "/v2/projects/p/locations/z/nodes/n7:wait"));
  worker.join();
  EXPECT_EQ(response.status, 200);
  EXPECT_EQ(Body(response)["done"], "n7");
  EXPECT_EQ(response.route, std::string(kNode) + ":wait");
}

TEST_F(RouterTest, SecondResponseIsIgnored) {
  router_.AddAsync("GET", "/twice", [](const HttpRequest&, const PathParams&, Responder respond) {
    respond(JsonResponse(200, nlohmann::json{{"n", 1}}));
    respond(JsonResponse(500, nlohmann::json{{"n", 2}}));
  });
  int calls = 0;
  router_.Dispatch(MakeRequest("GET", "/twice"), [&calls](HttpResponse r) {
    ++calls;
    EXPECT_EQ(r.status, 200);
  });
  EXPECT_EQ(calls, 1);
}

TEST_F(RouterTest, DroppedResponderBecomes500) {
  router_.AddAsync("GET", "/drop", [](const HttpRequest&, const PathParams&, Responder) {});
  EXPECT_EQ(router_.Handle(MakeRequest("GET", "/drop")).status, 500);
}

TEST_F(RouterTest, FallbackServesUnmatchedGetsOnly) {
  router_.SetFallback([](const HttpRequest& r, const PathParams&) {
    return JsonResponse(200, "\"" + r.path + "\"");
  });
  HttpResponse response = router_.Handle(MakeRequest("GET", "/index.html"));
  EXPECT_EQ(response.status, 200);
  EXPECT_EQ(response.body, "\"/index.html\"");
  EXPECT_EQ(response.route, "static");
  EXPECT_EQ(router_.Handle(MakeRequest("POST", "/index.html")).status, 404);
  // A path owned by a route with another method stays 405, not a static file.
  EXPECT_EQ(router_.Handle(MakeRequest("GET", "/v2/projects/p/locations/z/nodes")).status, 405);
}

TEST_F(RouterTest, RoutesListsRegistrations) {
  std::vector<RouteInfo> routes = router_.Routes();
  ASSERT_EQ(routes.size(), 5u);
  EXPECT_EQ(routes[0].method, "GET");
  EXPECT_EQ(routes[0].pattern, "/healthz");
  EXPECT_EQ(routes[3].pattern, std::string(kNode) + ":start");
}

TEST_F(RouterTest, MalformedPatternIsRejected) {
  router_.Add("GET", "/bad/{unclosed",
              [](const HttpRequest&, const PathParams& p) { return Echo("bad", p); });
  router_.Add("GET", "no-slash",
              [](const HttpRequest&, const PathParams& p) { return Echo("bad", p); });
  EXPECT_EQ(router_.Routes().size(), 5u);
}

}  // namespace
}  // namespace tpuemu::api
