// TpuctlTest: a real tpuemud process (delays 0, in-memory store, ephemeral port) and a helper
// that runs the real tpuctl binary against it, returning exit code, stdout and stderr.
#pragma once

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/cli/child_process.h"
#include "tests/e2e/daemon_process.h"
#include "tests/support/wait_for.h"

namespace tpuemu::testing {

class TpuctlTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(StartDaemon({})); }

  // (Re)starts tpuemud with extra flags.
  bool StartDaemon(const std::vector<std::string>& extra) {
    daemon_.Kill(SIGTERM);
    if (!daemon_.Start(TestDaemonArgs({"--db", ":memory:"}, extra))) return false;
    endpoint_ = "http://127.0.0.1:" + std::to_string(daemon_.port());
    return true;
  }

  ProcessResult Tpuctl(std::vector<std::string> args) {
    args.insert(args.begin(), TPUCTL_BIN);
    return ChildProcess::Run(args, Env());
  }
  std::map<std::string, std::string> Env() const {
    return {{"TPUEMU_ENDPOINT", endpoint_}, {"TPUEMU_PROJECT", ""}, {"TPUEMU_ZONE", ""}};
  }
  // Runs tpuctl and parses its stdout as JSON (fails the test on a non-zero exit).
  nlohmann::json TpuctlJson(const std::vector<std::string>& args) {
    ProcessResult r = Tpuctl(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << r.out;
    return j;
  }
  ProcessResult CreateNode(const std::string& id, const std::string& labels = "env=dev") {
    return Tpuctl({"compute", "tpus", "tpu-vm", "create", id, "--zone", kZone, "--accelerator-type",
                   "v4-8", "--version", "tpu-ubuntu2204-base", "--labels", labels});
  }

  static constexpr const char* kZone = "us-central2-b";
  DaemonProcess daemon_;
  std::string endpoint_;
};

inline std::string Describe(const ProcessResult& r) {
  return "exit " + std::to_string(r.exit_code) + "\nstdout:\n" + r.out + "\nstderr:\n" + r.err;
}

// tpuctl's argv for `compute tpus tpu-vm <rest...>`.
inline std::vector<std::string> TpuVm(std::initializer_list<std::string> rest) {
  std::vector<std::string> args = {"compute", "tpus", "tpu-vm"};
  args.insert(args.end(), rest);
  return args;
}

}  // namespace tpuemu::testing
