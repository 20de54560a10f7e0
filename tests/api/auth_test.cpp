// api/auth: token file parsing, the rules of AuthPolicy::Check, and RequireAuth wrapped around a
// router, both called directly and through a real HttpServer (headers on the wire).
#include "api/auth.h"

#include <filesystem>
#include <fstream>
#include <random>

#include <gtest/gtest.h>

#include "api/http_server.h"
#include "api/router.h"
#include "tests/support/http_client.h"

namespace tpuemu::api {
namespace {

using nlohmann::json;

constexpr char kTokens[] = R"({"tokens": [
  {"token": "ed-p1", "projects": ["p1"], "role": "editor"},
  {"token": "ro-p1", "projects": ["p1", "p3"], "role": "viewer"},
  {"token": "admin", "projects": ["*"], "role": "editor"},
  {"token": "ro-all", "projects": ["*"], "role": "viewer"}]})";

AuthPolicy Policy() { return AuthPolicy::Parse(kTokens).value(); }

HttpRequest Req(std::string method, std::string target, std::string token = "") {
  HttpRequest r = MakeRequest(std::move(method), std::move(target));
  if (!token.empty()) r.headers["authorization"] = "Bearer " + token;
  return r;
}

StatusCode CodeOf(const AuthPolicy& p, const HttpRequest& r) { return p.Check(r).code(); }

// A WebSocket (the dashboard's terminal) carries its token as a subprotocol item
// "bearer.<base64url>", is a write (an editor's), and names the token's user.
TEST(AuthPolicyCheck, TakesAWebSocketsTokenFromItsSubprotocols) {
  Result<AuthPolicy> p = AuthPolicy::Parse(R"({"tokens": [
      {"token": "ed/+1", "projects": ["p1"], "role": "editor", "user": "alice@example.com"},
      {"token": "ro-p1", "projects": ["p1"], "role": "viewer"}]})");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  auto ws = [](const std::string& protocols) {
    HttpRequest r = MakeRequest("GET", "/v2/projects/p1/locations/z/nodes/n/workers/0/terminal");
    r.headers["upgrade"] = "websocket";
    if (!protocols.empty()) r.headers["sec-websocket-protocol"] = protocols;
    return r;
  };
  // base64url("ed/+1") = "ZWQvKzE", base64url("ro-p1") = "cm8tcDE".
  EXPECT_EQ(CodeOf(*p, ws("tpuemu.terminal.v1, bearer.ZWQvKzE")), StatusCode::kOk);
  EXPECT_EQ(p->UserOf(ws("tpuemu.terminal.v1, bearer.ZWQvKzE")), "alice@example.com");
  EXPECT_EQ(CodeOf(*p, ws("tpuemu.terminal.v1")), StatusCode::kUnauthenticated);
  EXPECT_EQ(CodeOf(*p, ws("bearer.bm9wZQ")), StatusCode::kUnauthenticated);  // "nope"
  EXPECT_EQ(CodeOf(*p, ws("bearer.!!")), StatusCode::kUnauthenticated);
  EXPECT_EQ(CodeOf(*p, ws("bearer.cm8tcDE")), StatusCode::kPermissionDenied);  // a viewer
  // The subprotocol counts only on an upgrade: a plain GET must use the header.
  HttpRequest plain = ws("bearer.ZWQvKzE");
  plain.headers.erase("upgrade");
  EXPECT_EQ(CodeOf(*p, plain), StatusCode::kUnauthenticated);
  EXPECT_FALSE(AuthPolicy::Parse(R"({"tokens": [{"token": "t", "projects": ["p"],
      "role": "viewer", "user": 7}]})")
                   .ok());
}

TEST(AuthPolicyParse, RejectsMalformedFilesNamingTheField) {
  struct Case {
    const char* text;
    const char* needle;
  } cases[] = {
      {"nope", "not a JSON object"},
      {R"({"tokens": 3})", "'tokens' must be an array"},
      {R"({"tokens": [{"projects": ["p"], "role": "editor"}]})", "tokens[0].token"},
      {R"({"tokens": [{"token": "a b", "projects": ["p"], "role": "editor"}]})", "no spaces"},
      {R"({"tokens": [{"token": "t", "projects": ["p"], "role": "owner"}]})", "tokens[0].role"},
      {R"({"tokens": [{"token": "t", "projects": [], "role": "viewer"}]})", "tokens[0].projects"},
      {R"({"tokens": [{"token": "t", "projects": [""], "role": "viewer"}]})", "non-empty"},
      {R"({"tokens": [{"token": "t", "projects": ["p"], "role": "viewer"},
                      {"token": "t", "projects": ["q"], "role": "editor"}]})",
       "tokens[1].token repeats"},
  };
  for (const Case& c : cases) {
    Result<AuthPolicy> p = AuthPolicy::Parse(c.text);
    ASSERT_FALSE(p.ok()) << c.text;
    EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(p.status().message().find(c.needle), std::string::npos) << p.status().message();
  }
  EXPECT_EQ(Policy().size(), 4u);
  EXPECT_EQ(AuthPolicy::Load("/nonexistent/tokens.json").status().code(), StatusCode::kNotFound);
}

TEST(AuthPolicyCheck, OpenPathsNeedNoToken) {
  AuthPolicy p = Policy();
  for (const char* target : {"/healthz", "/readyz", "/metrics", "/", "/index.html", "/app.mjs",
                             "/vendor/x.js", "/victory", "/v", "/vx/projects/p2"}) {
    EXPECT_TRUE(p.Check(Req("GET", target)).ok()) << target;
    EXPECT_FALSE(AuthPolicy::IsProtected(Req("GET", target))) << target;
  }
}

TEST(AuthPolicyCheck, ApiPathsNeedABearerToken) {
  AuthPolicy p = Policy();
  for (const char* target :
       {"/v2/projects/p1/locations/us-central2-b/nodes", "/v1/projects/p1/locations",
        "/v2alpha1/projects/p1/locations", "/_emulator/reset", "/%76%32/projects/p1/locations",
        "/V2/projects/p1/locations", "/v2", "/v2/operations"}) {
    EXPECT_TRUE(AuthPolicy::IsProtected(Req("GET", target))) << target;
    EXPECT_EQ(CodeOf(p, Req("GET", target)), StatusCode::kUnauthenticated) << target;
    EXPECT_EQ(CodeOf(p, Req("GET", target, "wrong")), StatusCode::kUnauthenticated) << target;
  }
  HttpRequest basic = Req("GET", "/v2/projects/p1/locations");
  basic.headers["authorization"] = "Basic ZWQtcDE6";
  EXPECT_EQ(CodeOf(p, basic), StatusCode::kUnauthenticated);
  HttpRequest lower = Req("GET", "/v2/projects/p1/locations");
  lower.headers["authorization"] = "bearer  ed-p1 ";
  EXPECT_TRUE(p.Check(lower).ok());
  HttpRequest empty = Req("GET", "/v2/projects/p1/locations");
  empty.headers["authorization"] = "Bearer ";
  EXPECT_EQ(CodeOf(p, empty), StatusCode::kUnauthenticated);
}

TEST(AuthPolicyCheck, ProjectsAndRoles) {
  AuthPolicy p = Policy();
  const std::string nodes = "/v2/projects/p1/locations/us-central2-b/nodes";
  EXPECT_TRUE(p.Check(Req("GET", nodes, "ed-p1")).ok());
  EXPECT_TRUE(p.Check(Req("POST", nodes + "?nodeId=n", "ed-p1")).ok());
  EXPECT_TRUE(p.Check(Req("GET", nodes, "ro-p1")).ok());
  EXPECT_TRUE(p.Check(Req("GET", "/v2/projects/p3/locations/-/nodes", "ro-p1")).ok());
  EXPECT_TRUE(p.Check(Req("GET", nodes + "/n:wait", "ro-p1")).ok());
  // A viewer's writes.
  for (const char* method : {"POST", "PATCH", "DELETE", "PUT"}) {
    EXPECT_EQ(CodeOf(p, Req(method, nodes + "/n", "ro-p1")), StatusCode::kPermissionDenied)
        << method;
  }
  EXPECT_EQ(CodeOf(p, Req("POST", nodes + "/n:start", "ro-all")), StatusCode::kPermissionDenied);
  // Another project, also via percent-encoding and the `-` wildcard project.
  EXPECT_EQ(CodeOf(p, Req("GET", "/v2/projects/p2/locations/-/nodes", "ed-p1")),
            StatusCode::kPermissionDenied);
  EXPECT_EQ(CodeOf(p, Req("GET", "/v2/projects/%70%32/locations/-/nodes", "ed-p1")),
            StatusCode::kPermissionDenied);
  EXPECT_EQ(CodeOf(p, Req("GET", "/v2/projects/-/locations/-/nodes", "ed-p1")),
            StatusCode::kPermissionDenied);
  EXPECT_TRUE(p.Check(Req("GET", "/v2/projects/p2/locations/-/nodes", "admin")).ok());
  EXPECT_TRUE(p.Check(Req("GET", "/v2/projects/-/locations/-/nodes", "ro-all")).ok());
  // Project-less paths need a "*" token, and writes an editor.
  EXPECT_EQ(CodeOf(p, Req("POST", "/_emulator/reset", "ed-p1")), StatusCode::kPermissionDenied);
  EXPECT_EQ(CodeOf(p, Req("POST", "/_emulator/reset", "ro-all")), StatusCode::kPermissionDenied);
  EXPECT_TRUE(p.Check(Req("POST", "/_emulator/reset", "admin")).ok());
  // The hardware catalog is no project's: any valid token reads it, nobody writes it.
  EXPECT_TRUE(p.Check(Req("GET", "/_emulator/hardware", "ro-p1")).ok());
  EXPECT_EQ(CodeOf(p, Req("GET", "/_emulator/hardware")), StatusCode::kUnauthenticated);
  EXPECT_EQ(CodeOf(p, Req("POST", "/_emulator/hardware", "ed-p1")), StatusCode::kPermissionDenied);
  // So is the TPU comparison computed from it; its POST form needs a "*" token like any write.
  EXPECT_TRUE(p.Check(Req("GET", "/_emulator/compare?preset=llama2-7b", "ro-p1")).ok());
  EXPECT_EQ(CodeOf(p, Req("POST", "/_emulator/compare", "ed-p1")), StatusCode::kPermissionDenied);
  EXPECT_TRUE(p.Check(Req("POST", "/_emulator/compare", "admin")).ok());
}

TEST(AuthPolicyCheck, DeniedMessageNamesPermissionAndResource) {
  AuthPolicy p = Policy();
  Status s = p.Check(Req("POST", "/v2/projects/p2/locations/z/nodes?nodeId=n", "ed-p1"));
  EXPECT_EQ(s.message().rfind("Permission 'tpu.nodes.create' denied on resource "
                              "'projects/p2/locations/z/nodes'",
                              0),
            0u)
      << s.message();
  s = p.Check(Req("POST", "/v2/projects/p1/locations/z/nodes/n:stop", "ro-p1"));
  EXPECT_NE(s.message().find("'tpu.nodes.stop'"), std::string::npos) << s.message();
  s = p.Check(Req("DELETE", "/v2/projects/p1/locations/z/nodes/n/jobs/j", "ro-p1"));
  EXPECT_NE(s.message().find("'tpu.jobs.delete'"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("viewer"), std::string::npos) << s.message();
}

// Compute Engine's slice (/compute/{v1,beta,alpha}/projects/{p}/...): the same tokens, projects
// and roles as the TPU API, its project in segment 3, whatever the spelling of "compute".
TEST(AuthPolicyCheck, ComputePathsNeedATokenOfTheirProject) {
  AuthPolicy p = Policy();
  for (const char* target :
       {"/compute/v1/projects/p1", "/compute/beta/projects/p1/setCommonInstanceMetadata",
        "/compute/alpha/projects/p1/global/operations/op-1", "/Compute/v1/projects/p1",
        "/COMPUTE/v1/projects/p1", "/%63ompute/v1/projects/p1", "/%43OMPUTE/v1/projects/p1",
        "/compute", "/compute/v1", "/compute/v1/projects", "/compute/v1/PROJECTS/p1"}) {
    EXPECT_TRUE(AuthPolicy::IsProtected(Req("GET", target))) << target;
    EXPECT_EQ(CodeOf(p, Req("GET", target)), StatusCode::kUnauthenticated) << target;
    EXPECT_EQ(CodeOf(p, Req("GET", target, "wrong")), StatusCode::kUnauthenticated) << target;
  }
  // Not "compute": open as before.
  for (const char* target : {"/computer/v1/projects/p1", "/xcompute/v1/projects/p1"}) {
    EXPECT_FALSE(AuthPolicy::IsProtected(Req("GET", target))) << target;
  }
  const std::string project = "/compute/v1/projects/p1";
  EXPECT_TRUE(p.Check(Req("GET", project, "ed-p1")).ok());
  EXPECT_TRUE(p.Check(Req("GET", project, "ro-p1")).ok());
  EXPECT_TRUE(p.Check(Req("GET", "/%43ompute/v1/projects/p1", "ro-p1")).ok());
  EXPECT_TRUE(p.Check(Req("POST", project + "/setCommonInstanceMetadata", "ed-p1")).ok());
  EXPECT_TRUE(p.Check(Req("POST", project + "/global/operations/op-1/wait", "ed-p1")).ok());
  EXPECT_TRUE(p.Check(Req("GET", "/compute/v1/projects/p2", "admin")).ok());
  // Another project, plain, encoded or behind an upper-case "compute".
  for (const char* target :
       {"/compute/v1/projects/p2", "/compute/v1/projects/%70%32", "/Compute/beta/projects/p2",
        "/%63ompute/alpha/projects/p2", "/compute/v1/projects/-"}) {
    EXPECT_EQ(CodeOf(p, Req("GET", target, "ed-p1")), StatusCode::kPermissionDenied) << target;
  }
  // A viewer's writes, its own project included.
  EXPECT_EQ(CodeOf(p, Req("POST", project + "/setCommonInstanceMetadata", "ro-p1")),
            StatusCode::kPermissionDenied);
  EXPECT_EQ(CodeOf(p, Req("POST", project + "/setCommonInstanceMetadata", "ro-all")),
            StatusCode::kPermissionDenied);
  EXPECT_EQ(CodeOf(p, Req("POST", project + "/global/operations/op-1/wait", "ro-p1")),
            StatusCode::kPermissionDenied);
  // A Compute path without a project needs "*", as the TPU API's do.
  EXPECT_EQ(CodeOf(p, Req("GET", "/compute/v1/PROJECTS/p1", "ed-p1")),
            StatusCode::kPermissionDenied);
  EXPECT_TRUE(p.Check(Req("GET", "/compute/v1/PROJECTS/p1", "admin")).ok());
}

TEST(AuthPolicyCheck, ComputeDeniedMessageNamesComputesPermission) {
  AuthPolicy p = Policy();
  struct Case {
    const char* method;
    const char* target;
    const char* token;
    const char* permission;
  } cases[] = {
      {"GET", "/compute/v1/projects/p2", "ed-p1",
       "'compute.projects.get' denied on resource "
       "'projects/p2'"},
      {"POST", "/compute/v1/projects/p1/setCommonInstanceMetadata", "ro-p1",
       "'compute.projects.setCommonInstanceMetadata' denied on resource "
       "'projects/p1/setCommonInstanceMetadata'"},
      {"GET", "/compute/beta/projects/p2/global/operations/op-1", "ed-p1",
       "'compute.globalOperations.get'"},
      {"POST", "/compute/alpha/projects/p1/global/operations/op-1/wait", "ro-p1",
       "'compute.globalOperations.get'"},
      {"GET", "/compute/v1/projects/p2/zones/z/operations/op-1", "ed-p1",
       "'compute.zoneOperations.get'"},
      {"DELETE", "/compute/v1/projects/p2/zones/z/instances/i", "ed-p1",
       "'compute.instances.delete'"},
  };
  for (const Case& c : cases) {
    Status s = p.Check(Req(c.method, c.target, c.token));
    EXPECT_EQ(s.code(), StatusCode::kPermissionDenied) << c.target;
    EXPECT_NE(s.message().find(std::string("Permission ") + c.permission), std::string::npos)
        << s.message();
  }
}

class AuthRouterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    router_.Add("GET", "/healthz",
                [](const HttpRequest&, const PathParams&) { return JsonResponse(200, "{}"); });
    router_.Add("GET", "/v2/projects/{project}/locations/{location}/nodes",
                [](const HttpRequest&, const PathParams& p) {
                  return JsonResponse(200, json{{"project", p.at("project")}});
                });
    router_.Add("GET", "/metrics", [](const HttpRequest& r, const PathParams&) {
      return JsonResponse(200, json{{"all", r.sees_every_project}});
    });
    router_.Add("POST", "/_emulator/reset",
                [](const HttpRequest&, const PathParams&) { return JsonResponse(200, "{}"); });
    router_.SetFallback([](const HttpRequest&, const PathParams&) {
      return JsonResponse(200, R"({"static":true})");
    });
    handler_ = RequireAuth(policy_, router_.AsHandler());
  }
  HttpResponse Call(const HttpRequest& request) {
    HttpResponse out;
    handler_(request, [&out](HttpResponse r) { out = std::move(r); });
    return out;
  }

  AuthPolicy policy_ = Policy();
  Router router_;
  AsyncHandlerFn handler_;
};

TEST_F(AuthRouterTest, WrapsEveryRouteAndAnswersInGooglesEnvelope) {
  HttpResponse missing = Call(Req("GET", "/v2/projects/p1/locations/z/nodes"));
  EXPECT_EQ(missing.status, 401);
  json body = json::parse(missing.body);
  EXPECT_EQ(body["error"]["code"], 401);
  EXPECT_EQ(body["error"]["status"], "UNAUTHENTICATED");
  ASSERT_EQ(missing.headers.size(), 1u);
  EXPECT_EQ(missing.headers[0].first, "WWW-Authenticate");
  EXPECT_EQ(missing.headers[0].second, "Bearer realm=\"tpuemu\"");
  HttpResponse bad = Call(Req("GET", "/v2/projects/p1/locations/z/nodes", "nope"));
  EXPECT_EQ(bad.status, 401);
  ASSERT_EQ(bad.headers.size(), 1u);
  EXPECT_NE(bad.headers[0].second.find("invalid_token"), std::string::npos);
  HttpResponse other = Call(Req("GET", "/v2/projects/p2/locations/z/nodes", "ed-p1"));
  EXPECT_EQ(other.status, 403);
  EXPECT_EQ(json::parse(other.body)["error"]["status"], "PERMISSION_DENIED");
  HttpResponse ok = Call(Req("GET", "/v2/projects/p1/locations/z/nodes", "ed-p1"));
  EXPECT_EQ(ok.status, 200);
  EXPECT_EQ(json::parse(ok.body)["project"], "p1");
  // A path that matches no API route still needs the token (404 only after auth).
  EXPECT_EQ(Call(Req("GET", "/v2/projects/p1/nothing/here")).status, 401);
  EXPECT_EQ(Call(Req("POST", "/_emulator/reset")).status, 401);
  EXPECT_EQ(Call(Req("POST", "/_emulator/reset", "admin")).status, 200);
  EXPECT_EQ(Call(Req("GET", "/healthz")).status, 200);
  EXPECT_EQ(Call(Req("GET", "/index.html")).status, 200);
}

// Open paths stay open, but only a token granted every project lets a handler show every
// project's resources (GET /metrics names nodes only then).
TEST_F(AuthRouterTest, OpenPathsSeeEveryProjectOnlyWithAStarToken) {
  for (const char* token : {"", "nope", "ed-p1", "ro-p1"}) {
    HttpResponse r = Call(Req("GET", "/metrics", token));
    EXPECT_EQ(r.status, 200) << token;
    EXPECT_EQ(json::parse(r.body)["all"], false) << token;
  }
  for (const char* token : {"admin", "ro-all"}) {
    EXPECT_EQ(json::parse(Call(Req("GET", "/metrics", token)).body)["all"], true) << token;
  }
  EXPECT_FALSE(policy_.GrantsEveryProject(Req("GET", "/metrics", "ed-p1")));
  EXPECT_TRUE(policy_.GrantsEveryProject(Req("GET", "/v2/projects/p1", "admin")));
  // Without auth, nothing narrows it.
  EXPECT_TRUE(MakeRequest("GET", "/metrics").sees_every_project);
}

TEST_F(AuthRouterTest, OverRealHttp) {
  HttpServer server({}, handler_);
  ASSERT_TRUE(server.Start().ok());
  testing::HttpClient client("127.0.0.1", server.port());
  Result<testing::ClientResponse> r = client.Request("GET", "/v2/projects/p1/locations/z/nodes");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 401);
  EXPECT_EQ(r->Header("www-authenticate"), "Bearer realm=\"tpuemu\"");
  EXPECT_EQ(r->Json()["error"]["status"], "UNAUTHENTICATED");
  r = client.Request("GET", "/v2/projects/p1/locations/z/nodes", "",
                     {{"Authorization", "Bearer ro-p1"}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 200);
  r = client.Request("GET", "/healthz");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 200);
  server.Stop(std::chrono::seconds(2));
}

}  // namespace
}  // namespace tpuemu::api
