// The real tpuemud process: metrics reports, events and utilization history come from the store,
// so a restart (even kill -9) serves the same reports and the events feed continues where it was.
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/e2e/daemon_process.h"
#include "tests/support/http_client.h"
#include "tests/support/wait_for.h"

namespace tpuemu::testing {
namespace {

using nlohmann::json;

TEST(DaemonObservabilityTest, ReportsAndEventsSurviveKill9) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("tpuemu-e2e-obs-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  const std::vector<std::string> args =
      TestDaemonArgs({"--data-dir", dir.string()}, {"--utilization-interval-ms", "50"});
  const std::string parent = "/v2/projects/p/locations/us-central2-b";
  const std::string node = parent + "/nodes/r";
  const std::string body = R"({"workload": {"mlp": {"steps": 5, "hidden": 16}}})";
  std::string job_report, node_report;
  json events_before;
  {
    DaemonProcess first;
    ASSERT_TRUE(first.Start(args));
    HttpClient c("127.0.0.1", first.port(), std::chrono::seconds(30));
    ASSERT_EQ(c.Request("POST", parent + "/nodes?nodeId=r",
                        R"({"acceleratorType":"v4-8","runtimeVersion":"tpu-ubuntu2204-base"})")
                  ->status,
              200);
    ASSERT_TRUE(WaitFor([&] { return c.Request("GET", node)->Json()["state"] == "READY"; }));
    for (const char* id : {"a", "b"}) {
      ASSERT_EQ(c.Request("POST", node + "/jobs?jobId=" + std::string(id), body)->status, 200);
      ASSERT_TRUE(WaitFor([&] {
        return c.Request("GET", node + "/jobs/" + id + ":wait?timeout=5s")->Json()["state"] ==
               "SUCCEEDED";
      }));
    }
    job_report = c.Request("GET", node + "/jobs/b/metricsReport")->body;
    node_report = c.Request("GET", node + "/metricsReport")->body;
    // 2 node events + 3 per job, written right after each change.
    ASSERT_TRUE(WaitFor([&] {
      events_before = c.Request("GET", "/v2/projects/p/events?since=0")->Json();
      return events_before["events"].size() == 8;
    })) << events_before.dump();
    ASSERT_TRUE(WaitFor(
        [&] { return !c.Request("GET", node + "/metrics?window=1h")->Json()["samples"].empty(); }));
    EXPECT_EQ(first.Kill(SIGKILL), -SIGKILL);
  }
  EXPECT_NE(job_report.find("Counter: CachedCompile\n  Value: 1\n"), std::string::npos)
      << job_report;
  EXPECT_NE(node_report.find("Counter: MarkStep\n  Value: 10\n"), std::string::npos) << node_report;

  DaemonProcess second;
  ASSERT_TRUE(second.Start(args));
  HttpClient c("127.0.0.1", second.port(), std::chrono::seconds(30));
  EXPECT_EQ(c.Request("GET", node + "/jobs/b/metricsReport")->body, job_report);
  EXPECT_EQ(c.Request("GET", node + "/metricsReport")->body, node_report);
  EXPECT_EQ(c.Request("GET", "/v2/projects/p/events?since=0")->Json(), events_before);
  EXPECT_FALSE(c.Request("GET", node + "/metrics?window=1h")->Json()["samples"].empty());

  // The feed continues after the restart: a long-poll past the old events wakes on a new one.
  const int64_t since = events_before["nextSince"];
  ASSERT_EQ(c.Request("POST", node + ":stop", "{}")->status, 200);
  json next =
      c.Request("GET", "/v2/projects/p/events?since=" + std::to_string(since) + "&timeout=30s")
          ->Json();
  ASSERT_FALSE(next["events"].empty()) << next.dump();
  EXPECT_GT(next["events"][0]["seq"].get<int64_t>(), since);
  EXPECT_EQ(next["events"][0]["state"], "STOPPING");
  second.Kill(SIGTERM);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tpuemu::testing
