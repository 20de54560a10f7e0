// The real tpuemud process on PostgreSQL (--db postgresql://…, tests/support/postgres_server.h):
// acknowledged writes — a create mid-transition, a finished job, a running job — survive kill -9
// and the restart resumes them as on SQLite; one process serves a replica id at a time and
// others join as replicas; an unreachable database refuses to start.
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <thread>

#include "tests/e2e/daemon_process.h"
#include "tests/support/http_client.h"
#include "tests/support/postgres_server.h"
#include "tests/support/wait_for.h"

namespace tpuemu::testing {
namespace {

using nlohmann::json;

const std::string kNodes = "/v2/projects/p/locations/us-central2-b/nodes";

class DaemonPostgresTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string why = PostgresServer::UnavailableReason(); !why.empty()) GTEST_SKIP() << why;
    url_ = PostgresServer::Shared().CreateDatabase();
  }
  std::vector<std::string> Args(int provisioning_delay_ms) const {
    return {"--port",
            "0",
            "--db",
            url_,
            "--log-level",
            "warn",
            "--provisioning-delay-ms",
            std::to_string(provisioning_delay_ms),
            "--transition-delay-ms",
            "0"};
  }
  std::string url_;
};

TEST_F(DaemonPostgresTest, AcknowledgedWritesSurviveKill9AndTheRestartResumesThem) {
  std::string op_name, job;
  {
    DaemonProcess first;
    ASSERT_TRUE(first.Start(Args(1500)));
    HttpClient c("127.0.0.1", first.port());
    // A node that is READY before the kill, with a finished job and a job still running.
    ASSERT_EQ(c.Request("POST", kNodes + "?nodeId=ready",
                        R"({"acceleratorType":"v4-8","runtimeVersion":"tpu-ubuntu2204-base"})")
                  ->status,
              200);
    ASSERT_TRUE(
        WaitFor([&] { return c.Request("GET", kNodes + "/ready")->Json()["state"] == "READY"; },
                std::chrono::seconds(10)));
    ASSERT_EQ(c.Request("POST", kNodes + "/ready/jobs?jobId=small",
                        R"({"workload": {"matmul": {"m": 8, "n": 8, "k": 8}}})")
                  ->status,
              200);
    ASSERT_EQ(c.Request("GET", kNodes + "/ready/jobs/small:wait?timeout=30s")->Json()["state"],
              "SUCCEEDED");
    Result<ClientResponse> running = c.Request(
        "POST", kNodes + "/ready/jobs",
        R"({"workload": {"mlp": {"layers": 4, "batch": 128, "hidden": 256, "steps": 10000}},
            "timeoutSeconds": 2})");
    ASSERT_EQ(running->status, 200) << running->body;
    job = running->Json()["name"];
    ASSERT_TRUE(
        WaitFor([&] { return c.Request("GET", "/v2/" + job)->Json()["state"] == "RUNNING"; }));
    // A node still CREATING when the process dies.
    Result<ClientResponse> op =
        c.Request("POST", kNodes + "?nodeId=creating",
                  R"({"acceleratorType":"v4-8","runtimeVersion":"tpu-ubuntu2204-base"})");
    ASSERT_EQ(op->status, 200) << op->body;
    op_name = op->Json()["name"];
    EXPECT_EQ(first.Kill(SIGKILL), -SIGKILL);
  }
  DaemonProcess second;
  ASSERT_TRUE(second.Start(Args(1500)));
  HttpClient c("127.0.0.1", second.port(), std::chrono::seconds(30));
  EXPECT_EQ(c.Request("GET", kNodes + "/ready/jobs/small")->Json()["state"], "SUCCEEDED");
  json done;
  ASSERT_TRUE(WaitFor([&] {
    done = c.Request("GET", "/v2/" + op_name)->Json();
    return done.value("done", false);
  }));
  EXPECT_EQ(done["response"]["state"], "READY") << done.dump();
  // The running job went back to the queue (attempt 2) and ends by its timeout this time.
  json requeued;
  ASSERT_TRUE(WaitFor(
      [&] {
        requeued = c.Request("GET", "/v2/" + job + ":wait?timeout=5s")->Json();
        return requeued["state"] != "QUEUED" && requeued["state"] != "RUNNING";
      },
      std::chrono::seconds(60)));
  EXPECT_EQ(requeued["state"], "TIMED_OUT") << requeued.dump();
  EXPECT_EQ(requeued["attempt"], 2);
  // The events feed kept every transition the first process acknowledged.
  json events = c.Request("GET", "/v2/projects/p/events?since=0&pageSize=500")->Json()["events"];
  int creating_events = 0;
  for (const json& e : events) {
    if (e.value("resource", "") == "projects/p/locations/us-central2-b/nodes/creating") {
      ++creating_events;
    }
  }
  EXPECT_GE(creating_events, 2) << events.dump();  // CREATING, then READY after the restart
  EXPECT_EQ(second.Kill(SIGTERM), 0);
}

TEST_F(DaemonPostgresTest, AReplicaIdServesOnceAtATimeAndOtherIdsJoinAsReplicas) {
  auto with_id = [&](const std::string& id) {
    std::vector<std::string> args = Args(0);
    args.insert(args.end(), {"--replica-id", id});
    return args;
  };
  DaemonProcess first;
  ASSERT_TRUE(first.Start(with_id("a")));
  DaemonProcess twin;
  EXPECT_FALSE(twin.Start(with_id("a")));  // FAILED_PRECONDITION: replica a is served
  EXPECT_EQ(twin.Kill(SIGKILL), 1);
  DaemonProcess other;
  ASSERT_TRUE(other.Start(with_id("b")));  // a second replica of the same database
  HttpClient c("127.0.0.1", other.port());
  json replicas = c.Request("GET", "/_emulator/replicas")->Json();
  EXPECT_EQ(replicas["self"], "b");
  ASSERT_EQ(replicas["replicas"].size(), 2u) << replicas.dump();
  EXPECT_EQ(replicas["replicas"][0]["id"], "a");
  EXPECT_EQ(replicas["replicas"][1]["address"], "127.0.0.1:" + std::to_string(other.port()));
  EXPECT_EQ(first.Kill(SIGKILL), -SIGKILL);
  // The server ends a dead client's session, and with it the id's lock: a restart takes it.
  bool started = false;
  for (int attempt = 0; attempt < 50 && !started; ++attempt) {
    DaemonProcess again;
    started = again.Start(with_id("a"));
    if (!started) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_TRUE(started);
  EXPECT_EQ(other.Kill(SIGTERM), 0);
}

// (The message names the URL without its password: PgStoreUnreachableTest.)
TEST(DaemonPostgresUnreachableTest, RefusesToStart) {
  DaemonProcess d;
  EXPECT_FALSE(d.Start({"--port", "0", "--log-level", "warn", "--db",
                        "postgresql://tpu:s3cret@127.0.0.1:1/tpuemu?connect_timeout=2"}));
  EXPECT_EQ(d.Kill(SIGKILL), 1);  // tpuemud's exit status for a store it cannot open
}

}  // namespace
}  // namespace tpuemu::testing
