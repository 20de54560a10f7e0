// The README's first command makes VMs you can enter: tpuemud started as scripts/run starts it —
// from its working directory with a RELATIVE `--data-dir data` and tpuemud's default worker
// settings — boots a node's worker as a sandbox that OpenSSH logs into. Skips, saying why, when
// not root or without the OpenSSH client (WorkersTest).
#include <filesystem>
#include <string>

#include "tests/e2e/workers_fixture.h"

namespace tpuemu::testing {
namespace {

using nlohmann::json;

class WorkersFirstRunTest : public WorkersTest {
 protected:
  WorkersFirstRunTest() { as_scripts_run_ = true; }
};

TEST_F(WorkersFirstRunTest, ARelativeDataDirAndDefaultSettingsGiveAWorkerYouCanSshInto) {
  json node = CreateReady("first", {{"acceleratorType", "v4-8"},
                                    {"metadata", {{"ssh-keys", PublicKeyLine("tester")}}}});
  ASSERT_TRUE(node.is_object());
  // The default is sandboxes on: a node without them here would mean the first command does not
  // give VMs you can enter (say why, from the node).
  ASSERT_EQ(node.value("workerSandbox", json::object()).value("enabled", false), true)
      << node.dump();
  // Its files are in the data folder made absolute from tpuemud's working directory.
  EXPECT_TRUE(std::filesystem::exists(dir_ / "data" / "workers")) << dir_;
  ProcessResult ssh;
  const bool in = WaitFor(
      [&] {
        ssh = Ssh(node, 0, "true");
        return ssh.exit_code == 0;
      },
      std::chrono::seconds(30));
  EXPECT_TRUE(in) << "ssh exit " << ssh.exit_code << ": " << ssh.err;
  ProcessResult who = Ssh(node, 0, "hostname");
  EXPECT_EQ(who.exit_code, 0) << who.err;
  EXPECT_NE(who.out.find("-w-0"), std::string::npos) << who.out;
}

}  // namespace
}  // namespace tpuemu::testing
