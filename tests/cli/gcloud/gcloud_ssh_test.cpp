// The real gcloud's `compute tpus tpu-vm ssh|scp` and `queued-resources ssh` against a real
// tpuemud with worker sandboxes: the whole set-up is the two endpoint overrides (TPU and Compute
// Engine), as README "SSH into a TPU VM" shows. gcloud makes its own key, adds it to the node's
// metadata with nodes.patch and pins the host keys it reads from the guest attributes. Skips,
// saying why, without gcloud, without root or without the OpenSSH client.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/cli/child_process.h"
#include "tests/cli/gcloud/which.h"
#include "tests/e2e/daemon_process.h"
#include "tests/support/http_client.h"
#include "tests/support/wait_for.h"

namespace tpuemu::testing {
namespace {

using nlohmann::json;

class GcloudSshTest : public ::testing::Test {
 protected:
  void SetUp() override {
    gcloud_ = Which("gcloud");
    if (gcloud_.empty()) {
      GTEST_SKIP() << "gcloud is not installed (`command -v gcloud` found nothing)";
    }
    if (geteuid() != 0) GTEST_SKIP() << "worker sandboxes need root (uid " << geteuid() << ")";
    if (Which("ssh").empty() || Which("scp").empty()) {
      GTEST_SKIP() << "the OpenSSH client is not installed";
    }
    dir_ = std::filesystem::temp_directory_path() /
           ("tpuemu-gcloud-ssh-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_ / "home");
    ASSERT_TRUE(daemon_.Start(
        TestDaemonArgs({"--data-dir", (dir_ / "data").string()}, {"--worker-sandboxes", "auto"})));
    client_ = std::make_unique<HttpClient>("127.0.0.1", daemon_.port());
  }
  void TearDown() override {
    client_.reset();
    daemon_.Kill(SIGKILL);
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  ProcessResult Gcloud(std::vector<std::string> args) {
    args.insert(args.begin(), gcloud_);
    args.push_back("--zone=us-central2-b");
    const std::string endpoint = "http://127.0.0.1:" + std::to_string(daemon_.port()) + "/";
    return ChildProcess::Run(args, {{"CLOUDSDK_API_ENDPOINT_OVERRIDES_TPU", endpoint},
                                    {"CLOUDSDK_API_ENDPOINT_OVERRIDES_COMPUTE", endpoint},
                                    {"CLOUDSDK_AUTH_DISABLE_CREDENTIALS", "true"},
                                    {"CLOUDSDK_CONFIG", (dir_ / "gcloud").string()},
                                    {"CLOUDSDK_CORE_PROJECT", "proj"},
                                    {"CLOUDSDK_CORE_DISABLE_PROMPTS", "1"},
                                    {"CLOUDSDK_COMPONENT_MANAGER_DISABLE_UPDATE_CHECK", "1"},
                                    {"HOME", (dir_ / "home").string()},
                                    // gcloud's ssh user is the local one; these tests run as
                                    // root, whose keys tpuemu refuses as Google's guest agent
                                    // does (docs/workers.md): a developer's name instead.
                                    {"USER", "tester"},
                                    {"LOGNAME", "tester"}});
  }
  json Node(const std::string& id) {
    Result<ClientResponse> r =
        client_->Request("GET", "/v2/projects/proj/locations/us-central2-b/nodes/" + id);
    return r.ok() ? r->Json() : json();
  }

  std::string gcloud_;
  std::filesystem::path dir_;
  DaemonProcess daemon_;
  std::unique_ptr<HttpClient> client_;
};

TEST_F(GcloudSshTest, TpuVmSshOnEveryWorkerScpBothWaysAndTheKeyGcloudAdded) {
  ProcessResult created = Gcloud({"compute", "tpus", "tpu-vm", "create", "pod",
                                  "--accelerator-type=v4-32", "--version=tpu-ubuntu2204-base"});
  ASSERT_EQ(created.exit_code, 0) << created.err;
  json node = Node("pod");
  if (!node.value("workerSandbox", json::object()).value("enabled", false)) {
    GTEST_SKIP() << "tpuemud runs no worker sandboxes here: " << node.dump();
  }
  if (node["networkEndpoints"][0]["port"] != 8470) {
    GTEST_SKIP() << "the workers' SSH is not on port 22 (a host sshd holds it), and gcloud's ssh "
                    "always uses 22";
  }
  ProcessResult all = Gcloud({"compute", "tpus", "tpu-vm", "ssh", "pod", "--worker=all",
                              "--command=hostname; echo worker=$TPU_WORKER_ID"});
  ASSERT_EQ(all.exit_code, 0) << all.err;
  for (int w = 0; w < 4; ++w) {
    EXPECT_NE(all.out.find("-w-" + std::to_string(w) + "\n"), std::string::npos) << all.out;
    EXPECT_NE(all.out.find("worker=" + std::to_string(w) + "\n"), std::string::npos) << all.out;
  }
  // gcloud added its key with nodes.patch: the user it logged in as is in the node's ssh-keys.
  node = Node("pod");
  std::string keys = node["metadata"]["ssh-keys"];
  EXPECT_NE(keys.find(":ssh-rsa "), std::string::npos) << keys;

  const std::string up = (dir_ / "up.txt").string();
  ChildProcess::Run({"/bin/sh", "-c", "echo from-the-host > " + up}, {});
  ProcessResult put =
      Gcloud({"compute", "tpus", "tpu-vm", "scp", up, "pod:/tmp/up.txt", "--worker=all"});
  ASSERT_EQ(put.exit_code, 0) << put.err;
  const std::string down = (dir_ / "down.txt").string();
  ProcessResult get =
      Gcloud({"compute", "tpus", "tpu-vm", "scp", "pod:/tmp/up.txt", down, "--worker=3"});
  ASSERT_EQ(get.exit_code, 0) << get.err;
  EXPECT_EQ(ChildProcess::Run({"/bin/cat", down}, {}).out, "from-the-host\n");
  // A second ssh finds the key in place and the pinned host keys unchanged.
  ProcessResult again = Gcloud(
      {"compute", "tpus", "tpu-vm", "ssh", "pod", "--worker=2", "--command=cat /tmp/up.txt"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.out, "from-the-host\n");
  // A non-zero remote exit becomes gcloud's.
  EXPECT_EQ(Gcloud({"compute", "tpus", "tpu-vm", "ssh", "pod", "--command=exit 3"}).exit_code, 3);
}

TEST_F(GcloudSshTest, QueuedResourcesSshReachesTheWorkersOfItsNode) {
  // gcloud's queued-resources ssh addresses each nodeSpec by its nodeId.
  ProcessResult created =
      Gcloud({"compute", "tpus", "queued-resources", "create", "qr", "--node-id=qn",
              "--accelerator-type=v4-16", "--runtime-version=tpu-ubuntu2204-base"});
  ASSERT_EQ(created.exit_code, 0) << created.err;
  ASSERT_TRUE(
      WaitFor([&] { return Node("qn").value("state", "") == "READY"; }, std::chrono::seconds(30)));
  if (!Node("qn").value("workerSandbox", json::object()).value("enabled", false)) {
    GTEST_SKIP() << "tpuemud runs no worker sandboxes here";
  }
  ProcessResult r = Gcloud({"compute", "tpus", "queued-resources", "ssh", "qr", "--node=all",
                            "--worker=all", "--command=echo worker=$TPU_WORKER_ID"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("worker=0\n"), std::string::npos) << r.out << r.err;
  EXPECT_NE(r.out.find("worker=1\n"), std::string::npos) << r.out << r.err;
}

}  // namespace
}  // namespace tpuemu::testing
