// The account agent (service/workers/account_agent.sh) as tpuemud runs it: the embedded text is
// the file's, it parses, and — inside a real worker sandbox, which needs root (CI runs as root;
// elsewhere those cases skip, saying why) — it makes users with keys and sudo, takes them away,
// and refuses root and existing system accounts with a line tpuemud reads.
#include <gtest/gtest.h>
#include <stdio.h>
#include <sys/wait.h>

#include <chrono>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "sandbox/support.h"
#include "sandbox/worker_box.h"
#include "service/workers/account_agent.h"
#include "tests/sandbox/sandbox_test_util.h"

namespace tpuemu::service {
namespace {

using Accounts = std::map<std::string, std::vector<std::string>>;
using std::chrono::milliseconds;

constexpr char kKeyA[] = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAlice";
constexpr char kKeyB[] = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBob";

TEST(AccountAgentScriptTest, TheBinaryCarriesTheScriptAsItIsInTheTree) {
  std::ifstream in(TPUEMU_ACCOUNT_AGENT_SH);
  ASSERT_TRUE(in) << TPUEMU_ACCOUNT_AGENT_SH;
  std::stringstream file;
  file << in.rdbuf();
  EXPECT_EQ(std::string(kAccountAgentScript), file.str());
  auto [argv, input] = AccountAgentCommand({{"alice", {kKeyA, kKeyB}}});
  EXPECT_EQ(argv, (std::vector<std::string>{"/bin/bash", "-c", kAccountAgentScript}));
  EXPECT_EQ(input, std::string("alice ") + kKeyA + "\nalice " + kKeyB + "\n");
}

TEST(AccountAgentScriptTest, BashParsesIt) {
  FILE* bash = popen("/bin/bash -n", "w");
  ASSERT_NE(bash, nullptr);
  fputs(kAccountAgentScript, bash);
  const int status = pclose(bash);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "bash -n says " << status;
}

TEST(AccountAgentScriptTest, RejectionLinesAreReadOthersIgnored) {
  std::vector<AgentRejection> r = AccountAgentRejections(
      "made user alice\n"
      "reject\tdaemon\tan existing system account (uid 1)\n"
      "useradd: reject\tnot\tat the start\n"
      "reject\t\tno user\n"
      "reject\tnobody\twhy");
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].user, "daemon");
  EXPECT_EQ(r[0].why, "an existing system account (uid 1)");
  EXPECT_EQ(r[1].user, "nobody");
  EXPECT_EQ(r[1].why, "why");
}

// The script inside a fresh worker sandbox: a throwaway root over the host's system.
class AccountAgentSandboxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(tmp_.path().empty());
    support_ = sandbox::Probe(tmp_.path() + "/workers", "");
    if (!support_.ok) GTEST_SKIP() << "no worker sandbox here: " << support_.reason;
    sandbox::BootSpec spec;
    spec.dir = tmp_.path() + "/workers/agent";
    spec.hostname = "t1v-n-agent-w-0";
    spec.cgroup_name = "agent-test-" + std::to_string(getpid());
    Result<std::unique_ptr<sandbox::WorkerBox>> box = sandbox::WorkerBox::Boot(support_, spec);
    ASSERT_TRUE(box.ok()) << box.status().ToString();
    box_ = std::move(box).value();
  }

  // Runs the agent with `accounts`; its exit status and output.
  std::pair<int, std::string> Agent(const Accounts& accounts) {
    auto [argv, input] = AccountAgentCommand(accounts);
    return Raw(argv, input);
  }
  // Runs the script on `input` as given (lines the C++ side would never pass included).
  std::pair<int, std::string> Raw(const std::vector<std::string>& argv, const std::string& input) {
    Result<std::pair<int, std::string>> r = box_->Run(argv, input, milliseconds(30000));
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : std::make_pair(-1, std::string());
  }
  std::string Sh(const std::string& script) { return Raw({"/bin/sh", "-c", script}, "").second; }
  bool Sudoer(const std::string& user) {
    return Sh("id -nG " + user + " | tr ' ' '\\n' | grep -qx google-sudoers && echo yes") ==
           "yes\n";
  }

  sandbox::testing::TempDir tmp_;
  sandbox::Support support_;
  std::unique_ptr<sandbox::WorkerBox> box_;
};

TEST_F(AccountAgentSandboxTest, MakesUsersWithExactlyTheirKeysAndSudo) {
  auto [status, out] = Agent({{"alice", {kKeyA, kKeyB}}, {"bob", {kKeyB}}});
  ASSERT_EQ(status, 0) << out;
  EXPECT_NE(out.find("made user alice"), std::string::npos) << out;
  EXPECT_TRUE(AccountAgentRejections(out).empty()) << out;
  EXPECT_EQ(Sh("cat ~alice/.ssh/authorized_keys"),
            std::string(kKeyA) + "\n" + std::string(kKeyB) + "\n");
  EXPECT_EQ(Sh("cat ~bob/.ssh/authorized_keys"), std::string(kKeyB) + "\n");
  EXPECT_EQ(Sh("stat -c '%U %a' ~alice/.ssh ~alice/.ssh/authorized_keys"),
            "alice 700\nalice 600\n");
  EXPECT_EQ(Sh("getent passwd alice | cut -d: -f7; getent shadow alice | cut -d: -f2"),
            "/bin/bash\n*\n");
  EXPECT_TRUE(Sudoer("alice"));
  EXPECT_TRUE(Sudoer("bob"));
  EXPECT_EQ(Sh("cat /etc/sudoers.d/google_sudoers; stat -c %a /etc/sudoers.d/google_sudoers"),
            "%google-sudoers ALL=(ALL:ALL) NOPASSWD:ALL\n440\n");
  EXPECT_EQ(Sh("sort /var/lib/google/google_users"), "alice\nbob\n");
  // Again with the same input: nothing new is made.
  auto [again, again_out] = Agent({{"alice", {kKeyA, kKeyB}}, {"bob", {kKeyB}}});
  EXPECT_EQ(again, 0) << again_out;
  EXPECT_EQ(again_out.find("made user"), std::string::npos) << again_out;
}

TEST_F(AccountAgentSandboxTest, AUserNoLongerListedLosesKeysAndSudo) {
  ASSERT_EQ(Agent({{"alice", {kKeyA}}, {"bob", {kKeyB}}}).first, 0);
  auto [status, out] = Agent({{"bob", {kKeyB}}});
  ASSERT_EQ(status, 0) << out;
  EXPECT_NE(out.find("removed the keys of alice"), std::string::npos) << out;
  EXPECT_EQ(Sh("test -e ~alice/.ssh/authorized_keys || echo gone"), "gone\n");
  EXPECT_FALSE(Sudoer("alice"));
  EXPECT_EQ(Sh("getent passwd alice >/dev/null && echo kept"), "kept\n")
      << "the account and its home stay, as the guest agent leaves them";
  EXPECT_TRUE(Sudoer("bob"));
  EXPECT_EQ(Sh("cat /var/lib/google/google_users"), "bob\n");
}

TEST_F(AccountAgentSandboxTest, RefusesExistingSystemAccountsAndSaysSo) {
  ASSERT_EQ(Sh("getent passwd daemon | cut -d: -f3"), "1\n") << "the host has no daemon user";
  const std::string daemon_home = Sh("getent passwd daemon | cut -d: -f6 | tr -d '\\n'");
  auto [status, out] = Agent({{"daemon", {kKeyA}}, {"nobody", {kKeyA}}, {"carol", {kKeyB}}});
  ASSERT_EQ(status, 0) << out;
  std::vector<AgentRejection> r = AccountAgentRejections(out);
  ASSERT_EQ(r.size(), 2u) << out;
  EXPECT_EQ(r[0].user, "daemon");
  EXPECT_NE(r[0].why.find("system account (uid 1,"), std::string::npos) << r[0].why;
  EXPECT_EQ(r[1].user, "nobody");
  EXPECT_FALSE(Sudoer("daemon"));
  EXPECT_FALSE(Sudoer("nobody"));
  EXPECT_EQ(Sh("test -e " + daemon_home + "/.ssh/authorized_keys || echo none"), "none\n");
  EXPECT_EQ(Sh("cat ~carol/.ssh/authorized_keys"), std::string(kKeyB) + "\n");
  EXPECT_EQ(Sh("cat /var/lib/google/google_users"), "carol\n");
}

TEST_F(AccountAgentSandboxTest, UidMinComesFromLoginDefs) {
  ASSERT_EQ(Agent({{"dave", {kKeyA}}}).first, 0);
  ASSERT_TRUE(Sudoer("dave"));
  // dave's uid is now below the range: refused, and what he had is taken away.
  Sh("sed -i '/^UID_MIN/d' /etc/login.defs; echo 'UID_MIN 60000' >>/etc/login.defs");
  auto [status, out] = Agent({{"dave", {kKeyA}}});
  ASSERT_EQ(status, 0) << out;
  std::vector<AgentRejection> r = AccountAgentRejections(out);
  ASSERT_EQ(r.size(), 1u) << out;
  EXPECT_NE(r[0].why.find("below UID_MIN 60000"), std::string::npos) << r[0].why;
  EXPECT_FALSE(Sudoer("dave"));
  EXPECT_EQ(Sh("test -e ~dave/.ssh/authorized_keys || echo gone"), "gone\n");
}

TEST_F(AccountAgentSandboxTest, RootIsNeverTouchedEvenIfTheInputNamesIt) {
  // ssh_keys.cpp never passes root; the script refuses it on its own too.
  auto [argv, unused] = AccountAgentCommand({});
  auto [status, out] =
      Raw(argv, std::string("root ") + kKeyA + "\n1000 " + kKeyA + "\neve " + kKeyB + "\n");
  ASSERT_EQ(status, 0) << out;
  std::vector<AgentRejection> r = AccountAgentRejections(out);
  ASSERT_EQ(r.size(), 2u) << out;
  EXPECT_EQ(r[0].user, "root");
  EXPECT_EQ(r[1].user, "1000");
  EXPECT_EQ(Sh("test -e /root/.ssh/authorized_keys || echo none"), "none\n");
  EXPECT_FALSE(Sudoer("root"));
  EXPECT_EQ(Sh("cat ~eve/.ssh/authorized_keys"), std::string(kKeyB) + "\n");
}

}  // namespace
}  // namespace tpuemu::service
