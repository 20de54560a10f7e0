// The real gcloud CLI against the real tpuemud (issue 14 item 6), when gcloud is installed on the
// machine (`command -v gcloud`); otherwise every case skips and prints why. gcloud is pointed at
// tpuemud as docs/faults.md says: CLOUDSDK_API_ENDPOINT_OVERRIDES_TPU, credentials disabled, a
// throwaway CLOUDSDK_CONFIG. Covered: queued-resources create (single node and --node-count),
// list, describe, delete --force, reset; the alpha track's tpu-vm simulate-maintenance-event,
// perform-maintenance and get-guest-attributes; the non-tpu-vm catalog words (accelerator-types
// list, versions list) that call the legacy v1 API.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/cli/child_process.h"
#include "tests/cli/gcloud/which.h"
#include "tests/e2e/daemon_process.h"
#include "tests/support/wait_for.h"

namespace tpuemu::testing {
namespace {

using nlohmann::json;

constexpr char kZone[] = "us-central2-b";

class GcloudTest : public ::testing::Test {
 protected:
  void SetUp() override {
    gcloud_ = Which("gcloud");
    if (gcloud_.empty()) {
      GTEST_SKIP() << "gcloud is not installed (`command -v gcloud` found nothing): the real "
                      "gcloud CLI tests are skipped";
    }
    ASSERT_TRUE(
        daemon_.Start(TestDaemonArgs({"--db", ":memory:"}, {"--maintenance-duration-ms", "200"})));
    config_ = std::filesystem::temp_directory_path() /
              ("tpuemu-gcloud-" + std::to_string(::getpid()) + "-" +
               ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(config_);
  }
  void TearDown() override {
    if (!config_.empty()) std::filesystem::remove_all(config_);
  }

  // Runs `gcloud <args> --zone us-central2-b`.
  ProcessResult Gcloud(std::vector<std::string> args) {
    args.insert(args.begin(), gcloud_);
    args.push_back(std::string("--zone=") + kZone);
    return ChildProcess::Run(args, {{"CLOUDSDK_API_ENDPOINT_OVERRIDES_TPU",
                                     "http://127.0.0.1:" + std::to_string(daemon_.port()) + "/"},
                                    {"CLOUDSDK_AUTH_DISABLE_CREDENTIALS", "true"},
                                    {"CLOUDSDK_CONFIG", config_.string()},
                                    {"CLOUDSDK_CORE_PROJECT", "proj"},
                                    {"CLOUDSDK_CORE_DISABLE_PROMPTS", "1"},
                                    {"CLOUDSDK_COMPONENT_MANAGER_DISABLE_UPDATE_CHECK", "1"}});
  }
  // Runs gcloud with --format=json; the parsed output (the test fails on a non-zero exit).
  json GcloudJson(std::vector<std::string> args) {
    args.push_back("--format=json");
    ProcessResult r = Gcloud(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    json j = json::parse(r.out, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << r.out << r.err;
    return j;
  }
  std::string QrState(const std::string& id) {
    return GcloudJson({"compute", "tpus", "queued-resources", "describe", id})["state"]["state"];
  }

  std::string gcloud_;
  DaemonProcess daemon_;
  std::filesystem::path config_;
};

TEST_F(GcloudTest, QueuedResourcesCreateListDescribeResetAndForceDelete) {
  // gcloud waits for the create Operation; tpuemud provisions at once (delays 0).
  ProcessResult created =
      Gcloud({"compute", "tpus", "queued-resources", "create", "qr1", "--node-id=n1",
              "--accelerator-type=v4-8", "--runtime-version=tpu-ubuntu2204-base"});
  ASSERT_EQ(created.exit_code, 0) << created.err;
  ProcessResult multi = Gcloud({"compute", "tpus", "queued-resources", "create", "qr2",
                                "--node-count=2", "--node-prefix=ms", "--accelerator-type=v4-8",
                                "--runtime-version=tpu-ubuntu2204-base", "--spot"});
  ASSERT_EQ(multi.exit_code, 0) << multi.err;

  ProcessResult list = Gcloud({"compute", "tpus", "queued-resources", "list"});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_NE(
      list.out.find("NAME  ZONE           NODE_COUNT  ACCELERATOR_TYPE  TYPE  TOPOLOGY  STATE"),
      std::string::npos)
      << list.out;
  EXPECT_NE(list.out.find("qr2   us-central2-b  1"), std::string::npos) << list.out;

  json qr2 = GcloudJson({"compute", "tpus", "queued-resources", "describe", "qr2"});
  EXPECT_EQ(qr2["tpu"]["nodeSpec"][0]["multisliceParams"]["nodeCount"], 2);
  EXPECT_TRUE(qr2.contains("spot"));
  json nodes = GcloudJson({"compute", "tpus", "tpu-vm", "list"});
  ASSERT_EQ(nodes.size(), 3u) << nodes.dump();
  for (const json& n : nodes) EXPECT_EQ(n["state"], "READY") << n.dump();

  // Without --force a queued resource with live nodes is refused; with it, the nodes go too.
  ProcessResult refused = Gcloud({"compute", "tpus", "queued-resources", "delete", "qr2"});
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.err.find("force"), std::string::npos) << refused.err;
  ProcessResult forced =
      Gcloud({"compute", "tpus", "queued-resources", "delete", "qr2", "--force"});
  ASSERT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_EQ(GcloudJson({"compute", "tpus", "tpu-vm", "list"}).size(), 1u);

  // A deleted node suspends its queued resource; reset queues it again and it provisions anew.
  ASSERT_EQ(Gcloud({"compute", "tpus", "tpu-vm", "delete", "n1"}).exit_code, 0);
  ASSERT_EQ(QrState("qr1"), "SUSPENDED");
  ProcessResult reset = Gcloud({"compute", "tpus", "queued-resources", "reset", "qr1"});
  ASSERT_EQ(reset.exit_code, 0) << reset.err;
  EXPECT_TRUE(WaitFor([&] { return QrState("qr1") == "ACTIVE"; }, std::chrono::seconds(30)));
}

TEST_F(GcloudTest, AlphaMaintenanceAndGuestAttributes) {
  ASSERT_EQ(Gcloud({"compute", "tpus", "tpu-vm", "create", "m1", "--accelerator-type=v4-8",
                    "--version=tpu-ubuntu2204-base"})
                .exit_code,
            0);
  // gcloud waits for the Operation, which ends when the maintenance event does.
  ProcessResult simulated = Gcloud(
      {"alpha", "compute", "tpus", "tpu-vm", "simulate-maintenance-event", "m1", "--workers=0"});
  ASSERT_EQ(simulated.exit_code, 0) << simulated.err;
  json node = GcloudJson({"alpha", "compute", "tpus", "tpu-vm", "describe", "m1"});
  EXPECT_EQ(node["health"], "HEALTHY");
  ProcessResult performed =
      Gcloud({"alpha", "compute", "tpus", "tpu-vm", "perform-maintenance", "m1"});
  ASSERT_EQ(performed.exit_code, 0) << performed.err;
  ProcessResult attributes =
      Gcloud({"alpha", "compute", "tpus", "tpu-vm", "get-guest-attributes", "m1"});
  ASSERT_EQ(attributes.exit_code, 0) << attributes.err;
  EXPECT_NE(attributes.out.find("ssh-ed25519"), std::string::npos) << attributes.out;
}

TEST_F(GcloudTest, LegacyCatalogWords) {
  ProcessResult types = Gcloud({"compute", "tpus", "accelerator-types", "list"});
  ASSERT_EQ(types.exit_code, 0) << types.err;
  EXPECT_NE(types.out.find("v4-8"), std::string::npos) << types.out;
  ProcessResult versions = Gcloud({"compute", "tpus", "versions", "list"});
  ASSERT_EQ(versions.exit_code, 0) << versions.err;
  EXPECT_NE(versions.out.find("TENSORFLOW_VERSION"), std::string::npos) << versions.out;
}

}  // namespace
}  // namespace tpuemu::testing
