#include "sandbox/support.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "tests/sandbox/sandbox_test_util.h"

namespace tpuemu::sandbox {
namespace {

using testing::TempDir;

int CountEntries(const std::string& dir) {
  int n = 0;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") ++n;
    }
    closedir(d);
  }
  return n;
}

TEST(SupportTest, ProbeFindsEverythingAndLeavesNothingBehind) {
  TempDir tmp;
  const std::string workers = tmp.path() + "/workers";
  Support s = Probe(workers, "");
  if (geteuid() != 0) {
    EXPECT_FALSE(s.ok);
    EXPECT_EQ(s.reason, "worker sandboxes off: not root (uid " + std::to_string(geteuid()) + ")");
    return;
  }
  if (!s.ok) GTEST_SKIP() << s.reason;
  EXPECT_TRUE(s.reason.empty());
  EXPECT_EQ(s.helper[0], '/');
  EXPECT_EQ(access(s.helper.c_str(), X_OK), 0) << s.helper;
  EXPECT_EQ(access(s.sshd.c_str(), X_OK), 0) << s.sshd;
  EXPECT_EQ(access(s.ssh_keygen.c_str(), X_OK), 0) << s.ssh_keygen;
  EXPECT_EQ(s.limits_note.empty(), s.memory_limits && s.pids_limits) << s.limits_note;
  // The folder is made, and the probes left nothing in it but the workers' base tree.
  EXPECT_TRUE(testing::PathExists(workers));
  EXPECT_EQ(CountEntries(workers), 1);
  EXPECT_EQ(s.base_dir, workers + "/.base");
  for (const char* name : {"etc", "var", "opt", "srv"}) {
    EXPECT_TRUE(testing::PathExists(s.base_dir + "/" + name)) << name;
  }
  // One id range per process, above every host account, the same on a second probe.
  EXPECT_GE(s.id_first, 1u << 30);
  EXPECT_EQ(s.id_count, 65536u);
  EXPECT_EQ(Probe(workers, "").id_first, s.id_first);
}

TEST(SupportTest, ReasonsAreOneLine) {
  TempDir tmp;
  Support missing_helper = Probe(tmp.path(), "/nonexistent/tpuemu-sandbox");
  EXPECT_FALSE(missing_helper.ok);
  EXPECT_EQ(missing_helper.reason.find('\n'), std::string::npos);
  EXPECT_EQ(missing_helper.reason.rfind("worker sandboxes off: ", 0), 0u) << missing_helper.reason;
  if (geteuid() == 0) {
    EXPECT_NE(missing_helper.reason.find("/nonexistent/tpuemu-sandbox"), std::string::npos);
    Support relative = Probe("relative/dir", "");
    EXPECT_FALSE(relative.ok);
    EXPECT_NE(relative.reason.find("not absolute"), std::string::npos) << relative.reason;
  }
}

}  // namespace
}  // namespace tpuemu::sandbox
