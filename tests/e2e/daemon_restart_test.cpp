// The real tpuemud process: restart mid-transition on the same data dir, kill -9, SIGTERM.
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/e2e/daemon_process.h"
#include "tests/support/http_client.h"
#include "tests/support/wait_for.h"

namespace tpuemu::testing {
namespace {

using nlohmann::json;

class DaemonTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("tpuemu-e2e-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::vector<std::string> Args(int delay_ms) {
    return {"--port",
            "0",
            "--data-dir",
            dir_.string(),
            "--log-level",
            "warn",
            "--provisioning-delay-ms",
            std::to_string(delay_ms),
            "--transition-delay-ms",
            "0"};
  }

  std::filesystem::path dir_;
};

TEST_F(DaemonTest, CreatingNodeBecomesReadyAfterKillAndRestart) {
  DaemonProcess first;
  ASSERT_TRUE(first.Start(Args(1500)));
  HttpClient c1("127.0.0.1", first.port());
  Result<ClientResponse> op =
      c1.Request("POST", "/v2/projects/p/locations/us-central2-b/nodes?nodeId=r",
                 R"({"acceleratorType":"v4-8","runtimeVersion":"tpu-ubuntu2204-base"})");
  ASSERT_TRUE(op.ok());
  ASSERT_EQ(op->status, 200) << op->body;
  std::string op_name = op->Json()["name"];
  EXPECT_EQ(c1.Request("GET", "/v2/projects/p/locations/us-central2-b/nodes/r")->Json()["state"],
            "CREATING");
  EXPECT_EQ(first.Kill(SIGKILL), -SIGKILL);

  DaemonProcess second;
  ASSERT_TRUE(second.Start(Args(1500)));
  HttpClient c2("127.0.0.1", second.port());
  // The acknowledged create survived kill -9 and the transition resumes from its persisted due
  // time.
  ASSERT_EQ(c2.Request("GET", "/v2/projects/p/locations/us-central2-b/nodes/r")->status, 200);
  json done;
  ASSERT_TRUE(WaitFor([&] {
    done = c2.Request("GET", "/v2/" + op_name)->Json();
    return done.value("done", false);
  }));
  EXPECT_EQ(done["response"]["state"], "READY");
  EXPECT_EQ(c2.Request("GET", "/v2/projects/p/locations/us-central2-b/nodes/r")->Json()["state"],
            "READY");
  EXPECT_EQ(second.Kill(SIGTERM), 0);  // graceful shutdown exits 0
}

TEST_F(DaemonTest, SigtermFinishesAndStateSurvives) {
  DaemonProcess d;
  ASSERT_TRUE(d.Start(Args(0)));
  HttpClient c("127.0.0.1", d.port());
  for (int i = 0; i < 10; ++i) {
    ASSERT_EQ(c.Request("POST",
                        "/v2/projects/p/locations/us-central2-b/nodes?nodeId=s" + std::to_string(i),
                        R"({"acceleratorType":"v4-8","runtimeVersion":"tpu-ubuntu2204-base"})")
                  ->status,
              200);
  }
  EXPECT_EQ(d.Kill(SIGTERM), 0);
  DaemonProcess again;
  ASSERT_TRUE(again.Start(Args(0)));
  HttpClient c2("127.0.0.1", again.port());
  EXPECT_EQ(
      c2.Request("GET", "/v2/projects/p/locations/us-central2-b/nodes")->Json()["nodes"].size(),
      10u);
}

TEST_F(DaemonTest, InMemoryStoreAndBadFlags) {
  DaemonProcess mem;
  ASSERT_TRUE(mem.Start({"--port", "0", "--db", ":memory:", "--log-level", "off"}));
  HttpClient c("127.0.0.1", mem.port());
  EXPECT_EQ(c.Request("GET", "/readyz")->status, 200);
  DaemonProcess bad;
  EXPECT_FALSE(bad.Start({"--port", "99999"}));
  EXPECT_NE(bad.Kill(SIGKILL), 0);
}

TEST_F(DaemonTest, QueuedResourceProvisioningResumesAfterKill9) {
  const std::string qr = "/v2/projects/p/locations/us-central2-b/queuedResources/kq";
  DaemonProcess first;
  ASSERT_TRUE(first.Start(Args(1500)));  // its nodes stay CREATING for 1.5 s
  HttpClient c1("127.0.0.1", first.port());
  Result<ClientResponse> op = c1.Request(
      "POST", "/v2/projects/p/locations/us-central2-b/queuedResources?queuedResourceId=kq",
      R"({"tpu":{"nodeSpec":[{"parent":"projects/p/locations/us-central2-b",
          "multisliceParams":{"nodeCount":2},
          "node":{"acceleratorType":"v4-8","runtimeVersion":"tpu-ubuntu2204-base"}}]}})");
  ASSERT_TRUE(op.ok());
  ASSERT_EQ(op->status, 200) << op->body;
  ASSERT_TRUE(WaitFor([&] {
    Result<ClientResponse> r = c1.Request("GET", qr);
    return r.ok() && r->status == 200 && r->Json()["state"].value("state", "") == "PROVISIONING";
  }));
  EXPECT_EQ(first.Kill(SIGKILL), -SIGKILL);  // in the middle of provisioning

  DaemonProcess second;
  ASSERT_TRUE(second.Start(Args(1500)));
  HttpClient c2("127.0.0.1", second.port());
  // Recovery reconciles the stored queued resource: its nodes finish and it goes ACTIVE.
  std::string state;
  EXPECT_TRUE(WaitFor(
      [&] {
        Result<ClientResponse> r = c2.Request("GET", qr);
        state = r.ok() && r->status == 200 ? r->Json()["state"].value("state", "") : "";
        return state == "ACTIVE";
      },
      std::chrono::seconds(30)))
      << "last state " << state;
  for (const char* node : {"kq-0", "kq-1"}) {
    EXPECT_EQ(c2.Request("GET", std::string("/v2/projects/p/locations/us-central2-b/nodes/") + node)
                  ->Json()["state"],
              "READY");
  }
}

}  // namespace
}  // namespace tpuemu::testing
