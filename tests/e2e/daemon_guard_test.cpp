// The real tpuemud with the hardening flags: --auth-tokens (401/403 in Google's envelope, open
// health and static paths, a bad file refuses to start), --max-job-seconds (TIMED_OUT naming the
// limit) and --project-quota-tensorcores (429).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/e2e/daemon_process.h"
#include "tests/support/http_client.h"
#include "tests/support/wait_for.h"

namespace tpuemu::testing {
namespace {

using nlohmann::json;

constexpr char kNodeBody[] = R"({"acceleratorType":"v4-8","runtimeVersion":"tpu-ubuntu2204-base"})";

class DaemonGuardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("tpuemu-guard-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::vector<std::string> Args(std::vector<std::string> extra) {
    return TestDaemonArgs({"--db", ":memory:"}, extra);
  }
  std::string WriteFile(const std::string& name, const std::string& text) {
    std::filesystem::path file = dir_ / name;
    std::ofstream(file) << text;
    return file.string();
  }

  std::filesystem::path dir_;
};

std::map<std::string, std::string> Bearer(const std::string& token) {
  return {{"Authorization", "Bearer " + token}};
}

TEST_F(DaemonGuardTest, AuthTokensGuardTheApiOnly) {
  std::string tokens = WriteFile("tokens.json", R"({"tokens": [
    {"token": "alice", "projects": ["p1"], "role": "editor"},
    {"token": "viewer", "projects": ["p1"], "role": "viewer"},
    {"token": "root", "projects": ["*"], "role": "editor"}]})");
  DaemonProcess d;
  ASSERT_TRUE(d.Start(Args({"--auth-tokens", tokens})));
  HttpClient c("127.0.0.1", d.port());
  const std::string nodes = "/v2/projects/p1/locations/us-central2-b/nodes";

  // Open: health, readiness, static files (404 here: no web root is the point, not 401).
  EXPECT_EQ(c.Request("GET", "/healthz")->status, 200);
  EXPECT_EQ(c.Request("GET", "/readyz")->status, 200);
  EXPECT_NE(c.Request("GET", "/index.html")->status, 401);

  Result<ClientResponse> r = c.Request("GET", nodes);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 401);
  EXPECT_EQ(r->Json()["error"]["status"], "UNAUTHENTICATED");
  EXPECT_EQ(r->Header("www-authenticate").rfind("Bearer", 0), 0u);
  EXPECT_EQ(c.Request("GET", nodes, "", Bearer("mallory"))->status, 401);
  EXPECT_EQ(c.Request("GET", "/v1/projects/p1/locations")->status, 401);

  // A viewer reads but cannot write; an editor writes its project only.
  EXPECT_EQ(c.Request("GET", nodes, "", Bearer("viewer"))->status, 200);
  r = c.Request("POST", nodes + "?nodeId=n1", kNodeBody, Bearer("viewer"));
  EXPECT_EQ(r->status, 403);
  EXPECT_EQ(r->Json()["error"]["status"], "PERMISSION_DENIED");
  EXPECT_NE(r->body.find("tpu.nodes.create"), std::string::npos) << r->body;
  EXPECT_EQ(c.Request("POST", nodes + "?nodeId=n1", kNodeBody, Bearer("alice"))->status, 200);
  EXPECT_EQ(c.Request("GET", nodes + "/n1", "", Bearer("viewer"))->status, 200);
  r = c.Request("POST", "/v2/projects/p2/locations/us-central2-b/nodes?nodeId=n1", kNodeBody,
                Bearer("alice"));
  EXPECT_EQ(r->status, 403);
  EXPECT_EQ(c.Request("GET", "/v2/projects/p2/locations/-/nodes", "", Bearer("alice"))->status,
            403);
  EXPECT_EQ(c.Request("GET", "/v2/projects/p1/locations/-/nodes", "", Bearer("alice"))->status,
            200);
  // Project-less: reset needs a "*" editor.
  EXPECT_EQ(c.Request("POST", "/_emulator/reset", "", Bearer("alice"))->status, 403);
  EXPECT_EQ(c.Request("POST", "/_emulator/reset", "", Bearer("root"))->status, 200);
  EXPECT_EQ(c.Request("GET", nodes + "/n1", "", Bearer("root"))->status, 404);
  EXPECT_EQ(d.Kill(SIGTERM), 0);
}

TEST_F(DaemonGuardTest, BadTokenFileRefusesToStart) {
  DaemonProcess missing;
  EXPECT_FALSE(missing.Start(Args({"--auth-tokens", (dir_ / "nope.json").string()})));
  EXPECT_NE(missing.Kill(SIGKILL), 0);
  DaemonProcess malformed;
  std::string bad = WriteFile("bad.json", R"({"tokens": [{"token": "t", "role": "root"}]})");
  EXPECT_FALSE(malformed.Start(Args({"--auth-tokens", bad})));
  EXPECT_NE(malformed.Kill(SIGKILL), 0);
}

TEST_F(DaemonGuardTest, MaxJobSecondsEndsLongJobsTimedOut) {
  DaemonProcess d;
  ASSERT_TRUE(d.Start(Args({"--max-job-seconds", "1"})));
  HttpClient c("127.0.0.1", d.port(), std::chrono::seconds(30));
  const std::string parent = "/v2/projects/p/locations/us-central2-b";
  for (const char* id : {"a", "b"}) {
    Result<ClientResponse> op = c.Request("POST", parent + "/nodes?nodeId=" + id, kNodeBody);
    ASSERT_EQ(op->status, 200) << op->body;
    ASSERT_TRUE(WaitFor([&] {
      return c.Request("GET", "/v2/" + op->Json()["name"].get<std::string>())
          ->Json()
          .value("done", false);
    }));
  }
  // No timeoutSeconds (0), and one larger than the server's cap: both end at the cap.
  const std::string long_job =
      R"({"workload": {"mlp": {"layers": 4, "batch": 256, "hidden": 512, "steps": 10000}})";
  std::vector<std::string> names;
  for (const auto& [node, extra] : std::vector<std::pair<std::string, std::string>>{
           {"a", ""}, {"b", R"(, "timeoutSeconds": 600)"}}) {
    std::string body = long_job + extra + "}";
    Result<ClientResponse> job = c.Request("POST", parent + "/nodes/" + node + "/jobs", body);
    ASSERT_EQ(job->status, 200) << job->body;
    names.push_back(job->Json()["name"]);
  }
  for (const std::string& name : names) {
    json job;
    ASSERT_TRUE(WaitFor(
        [&] {
          job = c.Request("GET", "/v2/" + name + ":wait?timeout=5s")->Json();
          return job.value("state", "") != "QUEUED" && job.value("state", "") != "RUNNING";
        },
        std::chrono::seconds(120)));
    EXPECT_EQ(job["state"], "TIMED_OUT") << job.dump();
    EXPECT_EQ(job["exitCode"], 124);
    EXPECT_NE(job.value("reason", "").find("--max-job-seconds"), std::string::npos) << job.dump();
  }
  EXPECT_EQ(d.Kill(SIGTERM), 0);
}

TEST_F(DaemonGuardTest, ProjectQuotaFlagCountsNodesAcrossRestarts) {
  std::vector<std::string> args = {"--port",
                                   "0",
                                   "--data-dir",
                                   (dir_ / "data").string(),
                                   "--log-level",
                                   "warn",
                                   "--provisioning-delay-ms",
                                   "0",
                                   "--project-quota-tensorcores",
                                   "8"};
  const std::string nodes = "/v2/projects/p/locations/us-central2-b/nodes";
  {
    DaemonProcess d;
    ASSERT_TRUE(d.Start(args));
    HttpClient c("127.0.0.1", d.port());
    EXPECT_EQ(c.Request("POST", nodes + "?nodeId=a", kNodeBody)->status, 200);
    Result<ClientResponse> over = c.Request("POST", nodes + "?nodeId=b", kNodeBody);
    EXPECT_EQ(over->status, 429);
    EXPECT_EQ(over->Json()["error"]["status"], "RESOURCE_EXHAUSTED");
    EXPECT_EQ(d.Kill(SIGKILL), -SIGKILL);
  }
  DaemonProcess again;
  ASSERT_TRUE(again.Start(args));
  HttpClient c("127.0.0.1", again.port());
  // The node from before the restart still counts.
  EXPECT_EQ(c.Request("POST", nodes + "?nodeId=b", kNodeBody)->status, 429);
  EXPECT_EQ(again.Kill(SIGTERM), 0);
}

}  // namespace
}  // namespace tpuemu::testing
