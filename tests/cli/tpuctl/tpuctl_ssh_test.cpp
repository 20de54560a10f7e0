// `tpuctl compute tpus tpu-vm ssh|scp` and `queued-resources ssh`: the refusals everywhere (no
// sandboxes, bad --worker), and — as root with OpenSSH and a tpuemud that runs worker
// sandboxes — real sessions: the key made and added to the node's metadata, remote exit codes,
// --worker all in parallel, and scp both ways. Skips, saying why, where sandboxes cannot run.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "tests/cli/tpuctl/tpuctl_fixture.h"

namespace tpuemu::testing {
namespace {

using nlohmann::json;

TEST_F(TpuctlTest, SshRefusesANodeWithoutSandboxes) {
  ASSERT_EQ(CreateNode("plain").exit_code, 0);  // the harness runs tpuemud --worker-sandboxes off
  json node = TpuctlJson(TpuVm({"describe", "plain", "--zone", kZone, "--format", "json"}));
  EXPECT_FALSE(node.value("workerSandbox", json::object()).value("enabled", false)) << node.dump();

  ProcessResult r = Tpuctl(TpuVm({"ssh", "plain", "--zone", kZone, "--command", "true"}));
  EXPECT_EQ(r.exit_code, 3) << Describe(r);
  EXPECT_NE(r.err.find("FAILED_PRECONDITION: TPU VM [plain] has no worker sandboxes to connect "
                       "to: tpuemud runs it without worker sandboxes"),
            std::string::npos)
      << r.err;
  r = Tpuctl(TpuVm({"scp", "a.txt", "plain:/tmp/", "--zone", kZone}));
  EXPECT_EQ(r.exit_code, 3) << Describe(r);
  r = Tpuctl(TpuVm({"ssh", "plain", "--zone", kZone, "--worker", "0,1"}));
  EXPECT_EQ(r.exit_code, 3) << Describe(r);  // the node is refused before the workers are read

  r = Tpuctl(TpuVm({"ssh", "nope", "--zone", kZone}));
  EXPECT_EQ(r.exit_code, 3) << Describe(r);
  EXPECT_NE(r.err.find("NOT_FOUND"), std::string::npos) << r.err;

  r = Tpuctl(TpuVm({"scp", "a", "b", "--zone", kZone}));
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_NE(r.err.find("must be remote"), std::string::npos) << r.err;
}

// tpuemud with worker sandboxes, a HOME of its own (the key is made there) and USER=tester.
class TpuctlSshTest : public TpuctlTest {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "worker sandboxes need root (uid " << geteuid() << ")";
    for (const char* tool : {"/usr/bin/ssh", "/usr/bin/scp", "/usr/bin/ssh-keygen"}) {
      if (access(tool, X_OK) != 0) GTEST_SKIP() << tool << " is not installed (OpenSSH client)";
    }
    dir_ = std::filesystem::temp_directory_path() /
           ("tpuctl-ssh-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_ / "home");
    daemon_.Kill(SIGTERM);
    ASSERT_TRUE(daemon_.Start(
        TestDaemonArgs({"--data-dir", (dir_ / "data").string()}, {"--worker-sandboxes", "auto"})));
    endpoint_ = "http://127.0.0.1:" + std::to_string(daemon_.port());
  }
  void TearDown() override {
    daemon_.Kill(SIGKILL);
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  ProcessResult As(std::vector<std::string> args) {
    args.insert(args.begin(), TPUCTL_BIN);
    std::map<std::string, std::string> env = Env();
    env["HOME"] = (dir_ / "home").string();
    env["USER"] = "tester";
    return ChildProcess::Run(args, env);
  }
  // Creates a READY node; skips when this tpuemud could not give it sandboxes.
  bool CreateSandboxed(const std::string& id, const std::string& type) {
    ProcessResult r = Tpuctl(TpuVm({"create", id, "--zone", kZone, "--accelerator-type", type,
                                    "--version", "tpu-ubuntu2204-base", "--format", "json"}));
    EXPECT_EQ(r.exit_code, 0) << Describe(r);
    json node = json::parse(r.out, nullptr, false);
    if (node.is_discarded() || !node.contains("workerSandbox")) {
      ADD_FAILURE() << "no workerSandbox in " << r.out;
      return false;
    }
    if (!node["workerSandbox"].value("enabled", false)) {
      sandbox_reason_ = node["workerSandbox"].value("reason", std::string("(no reason)"));
      return false;
    }
    return true;
  }

  std::filesystem::path dir_;
  std::string sandbox_reason_;
};

TEST_F(TpuctlSshTest, SshAndScpIntoRealWorkers) {
  if (!CreateSandboxed("box", "v4-16")) {
    if (HasFailure()) return;
    GTEST_SKIP() << "tpuemud runs no worker sandboxes here: " << sandbox_reason_;
  }
  // First use: the key is made, added to the node's ssh-keys, and ssh retried until it lands.
  ProcessResult r = As(TpuVm({"ssh", "box", "--zone", kZone, "--command",
                              "echo hi from $(whoami) on $TPU_WORKER_ID; exit 7"}));
  EXPECT_EQ(r.exit_code, 7) << Describe(r);
  EXPECT_EQ(r.out, "hi from tester on 0\n") << Describe(r);
  EXPECT_TRUE(std::filesystem::exists(dir_ / "home/.ssh/google_compute_engine"));
  json node = TpuctlJson(TpuVm({"describe", "box", "--zone", kZone, "--format", "json"}));
  EXPECT_NE(node["metadata"].value("ssh-keys", std::string()).find("tester:ssh-rsa "),
            std::string::npos)
      << node.dump();

  // Every worker in parallel; the exit code is the first failing worker's.
  r = As(TpuVm({"ssh", "box", "--zone", kZone, "--worker", "all", "--command",
                "echo w$TPU_WORKER_ID; exit $((TPU_WORKER_ID * 3))"}));
  EXPECT_EQ(r.exit_code, 3) << Describe(r);
  EXPECT_NE(r.out.find("w0\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("w1\n"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("##### Command execution on worker 1 failed with exit status 3."),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("Updating instance ssh metadata"), std::string::npos) << r.err;

  // scp up to worker 1 and back.
  const std::filesystem::path local = dir_ / "up.txt";
  std::ofstream(local) << "payload\n";
  r = As(TpuVm({"scp", local.string(), "box:/tmp/up.txt", "--zone", kZone, "--worker", "1"}));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  r = As(TpuVm({"ssh", "box", "--zone", kZone, "--worker", "1", "--command", "cat /tmp/up.txt"}));
  EXPECT_EQ(r.out, "payload\n") << Describe(r);
  r = As(TpuVm(
      {"scp", "box:/tmp/up.txt", (dir_ / "down.txt").string(), "--zone", kZone, "--worker", "1"}));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  std::ifstream down(dir_ / "down.txt");
  std::string line;
  std::getline(down, line);
  EXPECT_EQ(line, "payload");

  // A stopped node cannot be connected to (gcloud's message).
  ASSERT_EQ(Tpuctl(TpuVm({"stop", "box", "--zone", kZone})).exit_code, 0);
  r = As(TpuVm({"ssh", "box", "--zone", kZone, "--command", "true"}));
  EXPECT_EQ(r.exit_code, 3) << Describe(r);
  EXPECT_NE(r.err.find("This TPU has state \"STOPPED\", so it cannot be currently connected to."),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace tpuemu::testing
