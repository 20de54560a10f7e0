// The real tpuemud process with jobs: a job RUNNING when the process is killed is re-queued
// (attempt 2) and runs again after the restart; its earlier log survives, and a finished job's
// metrics (steps, summary, per-op profile) read back the same. SIGTERM (issue 18 item 3) ends
// the process within --shutdown-timeout-ms even in the middle of a large op, and the running job
// goes back to QUEUED in the store (not left RUNNING for the next start to find). A job host
// maintenance re-queued (maxRetries) keeps its attempt and retries across a kill -9.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>

#include "tests/e2e/daemon_process.h"
#include "tests/support/http_client.h"
#include "tests/support/wait_for.h"

namespace tpuemu::testing {
namespace {

using nlohmann::json;

// A data dir of this test's own (emptied first: an earlier run that crashed may have left it).
std::filesystem::path FreshDataDir(const std::string& name) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("tpuemu-e2e-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  return dir;
}

// Creates node r (a v4-8) and waits until it is READY.
::testing::AssertionResult CreateReadyNode(HttpClient& c, const std::string& node) {
  Result<ClientResponse> created =
      c.Request("POST", "/v2/projects/p/locations/us-central2-b/nodes?nodeId=r",
                R"({"acceleratorType":"v4-8","runtimeVersion":"tpu-ubuntu2204-base"})");
  if (!created.ok() || created->status != 200) {
    return ::testing::AssertionFailure() << "create of node r failed";
  }
  if (!WaitFor([&] { return c.Request("GET", node)->Json()["state"] == "READY"; })) {
    return ::testing::AssertionFailure() << "node r did not become READY";
  }
  return ::testing::AssertionSuccess();
}

TEST(DaemonJobsTest, RunningJobIsRequeuedAndRunsAgainAfterKill9) {
  const std::filesystem::path dir = FreshDataDir("jobs");
  const std::vector<std::string> args = TestDaemonArgs({"--data-dir", dir.string()});
  const std::string node = "/v2/projects/p/locations/us-central2-b/nodes/r";
  std::string job;
  json small_metrics;
  {
    DaemonProcess first;
    ASSERT_TRUE(first.Start(args));
    HttpClient c("127.0.0.1", first.port());
    ASSERT_TRUE(CreateReadyNode(c, node));
    // A finished job's metrics, per-op profile included, must survive the kill.
    Result<ClientResponse> small =
        c.Request("POST", node + "/jobs?jobId=small",
                  R"({"workload": {"matmul": {"m": 8, "n": 8, "k": 8}}})");
    ASSERT_TRUE(small.ok());
    ASSERT_EQ(small->status, 200) << small->body;
    ASSERT_EQ(c.Request("GET", node + "/jobs/small:wait?timeout=30s")->Json()["state"],
              "SUCCEEDED");
    small_metrics = c.Request("GET", node + "/jobs/small/metrics")->Json();
    ASSERT_EQ(small_metrics["ops"].size(), 1u) << small_metrics.dump();
    EXPECT_EQ(small_metrics["ops"][0]["unit"], "mxu");
    // Long enough to be running when killed; the second run is cut short by its timeout. Steps
    // of ~3 ms (~70 ms under TSan): two of them finish well within the timeout under every
    // sanitizer, and 10000 of them take far longer than it on any machine.
    Result<ClientResponse> r = c.Request(
        "POST", node + "/jobs",
        R"({"workload": {"mlp": {"layers": 4, "batch": 128, "hidden": 256, "steps": 10000}},
            "timeoutSeconds": 2})");
    ASSERT_TRUE(r.ok());
    ASSERT_EQ(r->status, 200) << r->body;
    job = r->Json()["name"];
    ASSERT_TRUE(WaitFor([&] {
      json j = c.Request("GET", "/v2/" + job + "/metrics")->Json();
      return j["state"] == "RUNNING" && j["steps"].size() >= 2;
    }));
    json running = c.Request("GET", "/v2/" + job + "/metrics")->Json();
    EXPECT_FALSE(running["ops"].empty()) << "the profile is stored once the program compiles";
    EXPECT_TRUE(running["steps"][0].contains("hbmPeakBytes"));
    EXPECT_EQ(first.Kill(SIGKILL), -SIGKILL);
  }
  DaemonProcess second;
  ASSERT_TRUE(second.Start(args));
  HttpClient c("127.0.0.1", second.port(), std::chrono::seconds(30));
  EXPECT_EQ(c.Request("GET", node + "/jobs/small/metrics")->Json(), small_metrics);
  json after = c.Request("GET", "/v2/" + job)->Json();
  EXPECT_EQ(after["attempt"], 2) << after.dump();
  json done;
  ASSERT_TRUE(WaitFor(
      [&] {
        done = c.Request("GET", "/v2/" + job + ":wait?timeout=5s")->Json();
        return done["state"] != "QUEUED" && done["state"] != "RUNNING";
      },
      std::chrono::seconds(60)));
  EXPECT_EQ(done["state"], "TIMED_OUT") << done.dump();
  EXPECT_EQ(done["attempt"], 2);
  json logs = c.Request("GET", "/v2/" + job + "/logs")->Json();
  bool requeued = false;
  for (const auto& l : logs["lines"]) {
    requeued |= l.get<std::string>().find("re-queued after a restart") != std::string::npos;
  }
  EXPECT_TRUE(requeued) << logs.dump();
  second.Kill(SIGTERM);
  std::filesystem::remove_all(dir);
}

TEST(DaemonJobsTest, SigtermStopsALargeOpWithinTheBoundAndRequeuesTheJob) {
  const std::filesystem::path dir = FreshDataDir("sigterm");
  // tpuemud exits 1 when its shutdown outlives this bound (the watchdog in daemon/main.cpp), so
  // exit code 0 is the proof that it finished within it.
  const std::vector<std::string> args =
      TestDaemonArgs({"--data-dir", dir.string()}, {"--shutdown-timeout-ms", "10000"});
  const std::string node = "/v2/projects/p/locations/us-central2-b/nodes/r";
  std::string job;
  {
    DaemonProcess first;
    ASSERT_TRUE(first.Start(args));
    HttpClient c("127.0.0.1", first.port(), std::chrono::seconds(30));
    ASSERT_TRUE(CreateReadyNode(c, node));
    // The issue's probe: one 4096^3 f32 HIGHEST matmul takes tens of seconds per step here.
    Result<ClientResponse> r = c.Request(
        "POST", node + "/jobs?jobId=big",
        R"({"workload": {"matmul": {"m": 4096, "n": 4096, "k": 4096}}, "precision": "HIGHEST",
            "steps": 100})");
    ASSERT_TRUE(r.ok());
    ASSERT_EQ(r->status, 200) << r->body;
    job = r->Json()["name"];
    ASSERT_TRUE(WaitFor([&] {
      const json logs = c.Request("GET", "/v2/" + job + "/logs")->Json();
      for (const json& l : logs["lines"]) {
        if (l.get<std::string>().starts_with("compile:")) return true;  // the op is under way
      }
      return false;
    }));
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(first.Kill(SIGTERM), 0) << "shutdown outlived --shutdown-timeout-ms";
    std::printf(
        "SIGTERM to exit during a 4096^3 HIGHEST matmul: %.0f ms\n",
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  DaemonProcess second;
  ASSERT_TRUE(second.Start(args));
  HttpClient c("127.0.0.1", second.port(), std::chrono::seconds(30));
  const json after = c.Request("GET", "/v2/" + job)->Json();
  EXPECT_EQ(after["attempt"], 2) << after.dump();
  bool by_shutdown = false, by_recovery = false;
  const json logs = c.Request("GET", "/v2/" + job + "/logs")->Json();
  for (const json& l : logs["lines"]) {
    const std::string line = l.get<std::string>();
    by_shutdown |= line.find("interrupted by the shutdown of tpuemud; re-queued") != line.npos;
    by_recovery |= line.find("re-queued after a restart") != line.npos;
  }
  EXPECT_TRUE(by_shutdown) << "the shutdown wrote the job back to QUEUED";
  EXPECT_FALSE(by_recovery) << "the store held it QUEUED, not RUNNING";
  EXPECT_EQ(c.Request("POST", "/v2/" + job + ":cancel")->status, 200);
  EXPECT_EQ(second.Kill(SIGTERM), 0);
  std::filesystem::remove_all(dir);
}

// Issue 26: a queued job's cancel is committed before its reply. Both nodes run a long job (the
// engine pool is busy), the cancel of the job queued behind one of them replies CANCELLED, and a
// kill -9 right after that reply keeps it CANCELLED: it never runs after the restart.
TEST(DaemonJobsTest, AQueuedJobCancelledJustBeforeAKill9StaysCancelled) {
  const std::filesystem::path dir = FreshDataDir("cancel");
  const std::vector<std::string> args = TestDaemonArgs({"--data-dir", dir.string()});
  const std::string zone = "/v2/projects/p/locations/us-central2-b";
  const char* long_job =
      R"({"workload": {"mlp": {"layers": 2, "batch": 64, "hidden": 512, "steps": 6000}}})";
  {
    DaemonProcess first;
    ASSERT_TRUE(first.Start(args));
    HttpClient c("127.0.0.1", first.port(), std::chrono::seconds(30));
    for (const char* id : {"a", "b"}) {
      Result<ClientResponse> created =
          c.Request("POST", zone + "/nodes?nodeId=" + id,
                    R"({"acceleratorType":"v4-8","runtimeVersion":"tpu-ubuntu2204-base"})");
      ASSERT_TRUE(created.ok() && created->status == 200);
    }
    for (const char* id : {"a", "b"}) {
      ASSERT_TRUE(WaitFor(
          [&] { return c.Request("GET", zone + "/nodes/" + id)->Json()["state"] == "READY"; }));
      Result<ClientResponse> r =
          c.Request("POST", zone + "/nodes/" + id + "/jobs?jobId=long", long_job);
      ASSERT_TRUE(r.ok() && r->status == 200);
    }
    ASSERT_TRUE(WaitFor([&] {
      return c.Request("GET", zone + "/nodes/a/jobs/long")->Json()["state"] == "RUNNING" &&
             c.Request("GET", zone + "/nodes/b/jobs/long")->Json()["state"] == "RUNNING";
    }));
    Result<ClientResponse> q =
        c.Request("POST", zone + "/nodes/a/jobs?jobId=q1", R"({"workload": {"matmul": {"m": 8}}})");
    ASSERT_TRUE(q.ok() && q->status == 200);
    ASSERT_EQ(q->Json()["state"], "QUEUED");
    Result<ClientResponse> cancelled = c.Request("POST", zone + "/nodes/a/jobs/q1:cancel");
    ASSERT_TRUE(cancelled.ok());
    ASSERT_EQ(cancelled->status, 200) << cancelled->body;
    EXPECT_EQ(cancelled->Json()["state"], "CANCELLED") << cancelled->body;
    EXPECT_EQ(cancelled->Json()["exitCode"], 130);
    EXPECT_EQ(first.Kill(SIGKILL), -SIGKILL);
  }
  DaemonProcess second;
  ASSERT_TRUE(second.Start(args));
  HttpClient c("127.0.0.1", second.port(), std::chrono::seconds(30));
  json after = c.Request("GET", zone + "/nodes/a/jobs/q1")->Json();
  EXPECT_EQ(after["state"], "CANCELLED") << after.dump();
  EXPECT_EQ(after["exitCode"], 130);
  EXPECT_FALSE(after.contains("startTime")) << "it never ran: " << after.dump();
  for (const char* id : {"a", "b"}) {
    EXPECT_EQ(c.Request("POST", zone + "/nodes/" + id + "/jobs/long:cancel")->status, 200);
  }
  EXPECT_EQ(second.Kill(SIGTERM), 0);
  std::filesystem::remove_all(dir);
}

// A job that host maintenance re-queued (maxRetries) stays QUEUED across a kill -9 with its
// attempt and maxRetries, and runs again after the restart once the maintenance is over.
TEST(DaemonJobsTest, AJobRequeuedByMaintenanceKeepsItsRetriesAcrossARestart) {
  const std::filesystem::path dir = FreshDataDir("retry");
  const std::vector<std::string> args =
      TestDaemonArgs({"--data-dir", dir.string()}, {"--maintenance-duration-ms", "2000"});
  const std::string node = "/v2/projects/p/locations/us-central2-b/nodes/r";
  std::string job;
  {
    DaemonProcess first;
    ASSERT_TRUE(first.Start(args));
    HttpClient c("127.0.0.1", first.port(), std::chrono::seconds(30));
    ASSERT_TRUE(CreateReadyNode(c, node));
    Result<ClientResponse> r = c.Request(
        "POST", node + "/jobs",
        R"({"workload": {"mlp": {"layers": 4, "batch": 128, "hidden": 256, "steps": 10000}},
            "maxRetries": 2})");
    ASSERT_TRUE(r.ok());
    ASSERT_EQ(r->status, 200) << r->body;
    job = r->Json()["name"];
    ASSERT_TRUE(
        WaitFor([&] { return c.Request("GET", "/v2/" + job)->Json()["state"] == "RUNNING"; }));
    ASSERT_EQ(c.Request("POST",
                        "/v2alpha1/projects/p/locations/us-central2-b/nodes/r:"
                        "simulateMaintenanceEvent",
                        "{}")
                  ->status,
              200);
    ASSERT_TRUE(WaitFor([&] {
      json j = c.Request("GET", "/v2/" + job)->Json();
      return j["state"] == "QUEUED" && j["attempt"] == 2;
    }));
    EXPECT_EQ(first.Kill(SIGKILL), -SIGKILL);
  }
  DaemonProcess second;
  ASSERT_TRUE(second.Start(args));
  HttpClient c("127.0.0.1", second.port(), std::chrono::seconds(30));
  json after = c.Request("GET", "/v2/" + job)->Json();
  EXPECT_EQ(after["maxRetries"], 2) << after.dump();
  EXPECT_EQ(after["spec"]["maxRetries"], 2) << after.dump();
  // Once the maintenance is over (recovered from the store) it runs its second attempt.
  ASSERT_TRUE(WaitFor(
      [&] {
        json j = c.Request("GET", "/v2/" + job)->Json();
        return j["state"] == "RUNNING" && j["attempt"] == 2;
      },
      std::chrono::seconds(60)))
      << c.Request("GET", "/v2/" + job)->body;
  EXPECT_EQ(c.Request("GET", node)->Json()["health"], "HEALTHY");
  EXPECT_EQ(c.Request("POST", "/v2/" + job + ":cancel")->status, 200);
  EXPECT_EQ(second.Kill(SIGTERM), 0);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tpuemu::testing
