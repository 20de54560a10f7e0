// Auth on every route (issue 41): walks the route table of the real daemon::App — every
// (method, pattern) its router registers — with auth on, and checks each route against api/auth.h:
// an open route (the allow-list below) answers without a token; every other route answers 401
// without a token or with an unknown one, 403 to a token of another project (or, without a
// project in the path, to a project-scoped token), 403 to a viewer's write, and lets the right
// token through to its handler. A route added later that is neither on the allow-list nor
// protected fails here.
#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "daemon/app.h"

namespace tpuemu::daemon {
namespace {

constexpr char kTokens[] = R"({"tokens": [
  {"token": "ed-p1", "projects": ["p1"], "role": "editor"},
  {"token": "ro-p1", "projects": ["p1"], "role": "viewer"},
  {"token": "admin", "projects": ["*"], "role": "editor"},
  {"token": "ro-all", "projects": ["*"], "role": "viewer"}]})";

// Routes that need no token (api/auth.h): liveness, readiness, the scoped /metrics, and the
// discovery document (the emulated API's schema, no project's data).
const std::set<std::pair<std::string, std::string>> kOpenRoutes = {
    {"GET", "/healthz"},
    {"GET", "/readyz"},
    {"GET", "/metrics"},
    {"GET", "/$discovery/rest"},
    {"GET", "/discovery/v1/apis/tpu/{version}/rest"},
};

// Project-less reads any valid token may make (catalog data of no project).
const std::set<std::pair<std::string, std::string>> kSharedCatalogReads = {
    {"GET", "/_emulator/hardware"},
    {"GET", "/_emulator/compare"},
};

bool IsRead(const std::string& method) { return method == "GET" || method == "HEAD"; }

// The pattern with `{project}` as `project` and every other `{var}` as "x1"; custom verbs kept.
std::string PathFor(const std::string& pattern, const std::string& project) {
  std::string out;
  for (std::size_t i = 0; i < pattern.size();) {
    if (pattern[i] != '{') {
      out += pattern[i++];
      continue;
    }
    const std::size_t close = pattern.find('}', i);
    out += pattern.substr(i + 1, close - i - 1) == "project" ? project : "x1";
    i = close + 1;
  }
  return out;
}

bool HasProject(const std::string& pattern) {
  return pattern.find("/projects/{project}") != std::string::npos;
}

class AuthRoutesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    AppOptions options;
    options.db_path = ":memory:";
    options.serve_http = false;
    options.writer_threads = 2;
    options.engine_threads = 1;
    options.log_requests = false;
    options.auth = api::AuthPolicy::Parse(kTokens).value();
    Result<std::unique_ptr<App>> app = App::Start(std::move(options));
    ASSERT_TRUE(app.ok()) << app.status().ToString();
    app_ = std::move(app).value();
    routes_ = app_->Routes();
  }

  // `timeout=0s` keeps the long-polls (jobs :wait, events) from waiting once past auth.
  api::HttpResponse Call(const std::string& method, const std::string& path,
                         const std::string& token = "") const {
    api::HttpRequest request = api::MakeRequest(method, path + "?timeout=0s");
    if (!token.empty()) request.headers["authorization"] = "Bearer " + token;
    return app_->Handle(request);
  }

  // Answered by the auth layer (api/auth.cpp labels its responses "auth"), with this status.
  static void ExpectDenied(const api::HttpResponse& r, int status, const std::string& permission) {
    EXPECT_EQ(r.route, "auth") << r.body;
    EXPECT_EQ(r.status, status) << r.body;
    if (status == 401) {
      const bool challenged = std::any_of(r.headers.begin(), r.headers.end(), [](const auto& h) {
        return h.first == "WWW-Authenticate" && h.second.starts_with("Bearer");
      });
      EXPECT_TRUE(challenged) << "401 without WWW-Authenticate";
      EXPECT_NE(r.body.find("UNAUTHENTICATED"), std::string::npos) << r.body;
    } else {
      EXPECT_NE(r.body.find("PERMISSION_DENIED"), std::string::npos) << r.body;
      EXPECT_NE(r.body.find("Permission '" + permission), std::string::npos) << r.body;
    }
  }
  static void ExpectPassed(const api::HttpResponse& r) {
    EXPECT_NE(r.route, "auth") << r.status << " " << r.body;
    EXPECT_NE(r.status, 401) << r.body;
    EXPECT_NE(r.status, 403) << r.body;
  }

  static bool IsOpen(const api::RouteInfo& route) {
    return kOpenRoutes.count({route.method, route.pattern}) > 0;
  }
  // The prefix of the permission its 403 names: Compute's under /compute, else the TPU API's.
  static std::string PermissionPrefix(const api::RouteInfo& route) {
    return route.pattern.starts_with("/compute/") ? "compute." : "tpu.";
  }

  std::unique_ptr<App> app_;
  std::vector<api::RouteInfo> routes_;
};

TEST_F(AuthRoutesTest, TheTableHoldsEveryFamilyAndTheAllowListIsCurrent) {
  ASSERT_GT(routes_.size(), 50u);
  std::set<std::pair<std::string, std::string>> known;
  for (const api::RouteInfo& r : routes_) known.insert({r.method, r.pattern});
  for (const auto& open : kOpenRoutes) {
    EXPECT_TRUE(known.count(open)) << "allow-listed but not routed: " << open.second;
  }
  for (const auto& read : kSharedCatalogReads) {
    EXPECT_TRUE(known.count(read)) << "shared read but not routed: " << read.second;
  }
  for (const char* version : {"v1", "beta", "alpha"}) {
    const std::string project = std::string("/compute/") + version + "/projects/{project}";
    EXPECT_TRUE(known.count({"GET", project}));
    EXPECT_TRUE(known.count({"POST", project + "/setCommonInstanceMetadata"}));
    EXPECT_TRUE(known.count({"GET", project + "/global/operations/{operation}"}));
    EXPECT_TRUE(known.count({"POST", project + "/global/operations/{operation}/wait"}));
  }
}

TEST_F(AuthRoutesTest, OpenRoutesNeedNoToken) {
  for (const api::RouteInfo& route : routes_) {
    if (!IsOpen(route)) continue;
    SCOPED_TRACE(route.method + " " + route.pattern);
    ExpectPassed(Call(route.method, PathFor(route.pattern, "p1")));
  }
  // The dashboard's static files (the router's fallback, not a route).
  for (const char* path : {"/", "/index.html", "/vendor/chart.js/chart.umd.js"}) {
    SCOPED_TRACE(path);
    ExpectPassed(Call("GET", path));
  }
}

TEST_F(AuthRoutesTest, EveryOtherRouteAnswers401WithoutAValidToken) {
  for (const api::RouteInfo& route : routes_) {
    if (IsOpen(route)) continue;
    const std::string path = PathFor(route.pattern, "p1");
    SCOPED_TRACE(route.method + " " + path +
                 ": neither on the open allow-list (tests/e2e/auth_routes_test.cpp, api/auth.h) "
                 "nor protected");
    ExpectDenied(Call(route.method, path), 401, "");
    ExpectDenied(Call(route.method, path, "wrong"), 401, "");
  }
}

TEST_F(AuthRoutesTest, AnotherProjectOrNoProjectNeedsItsGrant) {
  for (const api::RouteInfo& route : routes_) {
    if (IsOpen(route)) continue;
    SCOPED_TRACE(route.method + " " + route.pattern);
    if (HasProject(route.pattern)) {
      ExpectDenied(Call(route.method, PathFor(route.pattern, "p2"), "ed-p1"), 403,
                   PermissionPrefix(route));
      ExpectDenied(Call(route.method, PathFor(route.pattern, "p2"), "ro-p1"), 403,
                   PermissionPrefix(route));
    } else if (kSharedCatalogReads.count({route.method, route.pattern}) == 0) {
      // A path without a project needs a token granted every project.
      ExpectDenied(Call(route.method, PathFor(route.pattern, "p1"), "ed-p1"), 403,
                   PermissionPrefix(route));
    }
  }
}

TEST_F(AuthRoutesTest, AViewersWriteIs403) {
  int writes = 0;
  for (const api::RouteInfo& route : routes_) {
    if (IsOpen(route) || IsRead(route.method)) continue;
    ++writes;
    const std::string path = PathFor(route.pattern, "p1");
    SCOPED_TRACE(route.method + " " + path);
    if (HasProject(route.pattern)) {
      ExpectDenied(Call(route.method, path, "ro-p1"), 403, PermissionPrefix(route));
    }
    ExpectDenied(Call(route.method, path, "ro-all"), 403, PermissionPrefix(route));
  }
  EXPECT_GT(writes, 10);
}

TEST_F(AuthRoutesTest, TheRightTokenPassesAuth) {
  for (const api::RouteInfo& route : routes_) {
    if (IsOpen(route)) continue;
    const std::string path = PathFor(route.pattern, "p1");
    SCOPED_TRACE(route.method + " " + path);
    if (HasProject(route.pattern)) {
      ExpectPassed(Call(route.method, path, "ed-p1"));
      if (IsRead(route.method)) ExpectPassed(Call(route.method, path, "ro-p1"));
    } else if (kSharedCatalogReads.count({route.method, route.pattern})) {
      ExpectPassed(Call(route.method, path, "ro-p1"));
    }
    ExpectPassed(Call(route.method, path, "admin"));
    if (IsRead(route.method)) ExpectPassed(Call(route.method, path, "ro-all"));
  }
}

TEST_F(AuthRoutesTest, ComputeSpellingsCannotSlipPast) {
  for (const char* path :
       {"/Compute/v1/projects/p1", "/COMPUTE/v1/projects/p1", "/%63ompute/v1/projects/p1",
        "/%43OMPUTE/beta/projects/p1/setCommonInstanceMetadata"}) {
    SCOPED_TRACE(path);
    const std::string mine = path;
    const std::string method = mine.ends_with("Metadata") ? "POST" : "GET";
    std::string other = mine;
    other.replace(other.find("/p1"), 3, "/p2");
    ExpectDenied(Call(method, mine), 401, "");
    ExpectDenied(Call(method, other, "ed-p1"), 403, "compute.projects.");
  }
  // The project's ssh-keys open every node: a viewer may read them, not set them.
  ExpectPassed(Call("GET", "/compute/v1/projects/p1", "ro-p1"));
  ExpectDenied(Call("POST", "/compute/v1/projects/p1/setCommonInstanceMetadata", "ro-p1"), 403,
               "compute.projects.setCommonInstanceMetadata");
  ExpectDenied(Call("GET", "/compute/v1/projects/p2/global/operations/op-1", "ed-p1"), 403,
               "compute.globalOperations.get");
}

}  // namespace
}  // namespace tpuemu::daemon
