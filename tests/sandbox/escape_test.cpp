// The escape suite, sandbox level: root inside a worker probes the host as a tenant who is root in
// their own TPU VM would, and each probe asserts containment (docs/sandbox.md, "What root inside
// can and cannot do"). The service-level probes (other projects' metadata, the API, floods) are in
// tests/e2e/workers_escape_test.cpp.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>

#include "sandbox/worker_box.h"
#include "tests/sandbox/sandbox_test_util.h"

namespace tpuemu::sandbox {
namespace {

using std::chrono::milliseconds;
using testing::PathExists;
using testing::ReadFile;

class EscapeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(tmp_.path().empty());
    // A host secret (root's only) and a host file anyone may read, both in the host's /etc.
    secret_ = "/etc/tpuemu-escape-secret-" + std::to_string(getpid());
    open_file_ = "/etc/tpuemu-escape-open-" + std::to_string(getpid());
    if (geteuid() == 0) {
      testing::WriteFile(secret_, "host secret\n");
      chmod(secret_.c_str(), 0600);
      testing::WriteFile(open_file_, "anyone\n");
      chmod(open_file_.c_str(), 0644);
    }
    support_ = Probe(tmp_.path() + "/workers", "");
    if (!support_.ok) GTEST_SKIP() << support_.reason;
    BootSpec spec;
    spec.dir = tmp_.path() + "/workers/w";
    spec.hostname = "t1v-n-escape-w-0";
    spec.cgroup_name = "escape-" + std::to_string(getpid());
    spec.memory_limit_bytes = 256 << 20;
    spec.pids_limit = 64;
    Result<std::unique_ptr<WorkerBox>> box = WorkerBox::Boot(support_, spec);
    ASSERT_TRUE(box.ok()) << box.status().ToString();
    box_ = std::move(box).value();
  }
  void TearDown() override {
    unlink(secret_.c_str());
    unlink(open_file_.c_str());
  }

  // sh -c `script` as root inside: exit status and output.
  std::pair<int, std::string> Sh(const std::string& script) {
    Result<std::pair<int, std::string>> r =
        box_->Run({"/bin/sh", "-c", script}, "", milliseconds(10000));
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? r.value() : std::make_pair(-1, std::string());
  }

  // A python3 one-liner's output inside (python3 is the host's, under /usr).
  std::string Py(const std::string& code) {
    return Sh("/usr/bin/python3 -c '" + code + "' 2>&1").second;
  }

  testing::TempDir tmp_;
  Support support_;
  std::unique_ptr<WorkerBox> box_;
  std::string secret_;
  std::string open_file_;
};

TEST_F(EscapeTest, RootInsideIsAnUnprivilegedIdOutside) {
  EXPECT_GE(support_.id_first, 65536u);
  EXPECT_EQ(Sh("id -u; id -g").second, "0\n0\n");
  std::istringstream map(Sh("cat /proc/self/uid_map").second);
  uint64_t inside = 1, outside = 0, count = 0;
  map >> inside >> outside >> count;
  EXPECT_EQ(inside, 0u);
  EXPECT_EQ(outside, support_.id_first);
  EXPECT_EQ(count, 65536u);
  // What root inside writes is the unprivileged id's on the host.
  ASSERT_EQ(Sh("echo x > /root/mine").first, 0);
  struct stat st {};
  ASSERT_EQ(stat((tmp_.path() + "/workers/w/fs/root/mine").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, support_.id_first);
  // The worker's init runs as that id on the host.
  const std::string status = ReadFile("/proc/" + std::to_string(box_->init_pid()) + "/status");
  EXPECT_NE(status.find("Uid:\t" + std::to_string(support_.id_first)), std::string::npos) << status;
  // The host's root files are root's inside: sudo's set-user-ID works.
  EXPECT_EQ(Sh("stat -c '%u %a' /usr/bin/sudo /etc/passwd").second, "0 4755\n0 644\n");
}

TEST_F(EscapeTest, RootInsideCannotMountOrReachItsCgroups) {
  EXPECT_NE(Sh("mount -t tmpfs none /mnt").first, 0);
  EXPECT_NE(Sh("mkdir -p /tmp/cg && mount -t cgroup2 none /tmp/cg").first, 0);
  EXPECT_NE(Sh("mkdir -p /tmp/cg1 && mount -t cgroup -o memory none /tmp/cg1").first, 0);
  EXPECT_NE(Sh("mount -o remount,rw /sys").first, 0);
  EXPECT_EQ(Sh("ls -A /sys/fs/cgroup 2>/dev/null | wc -l").second, "0\n");
  EXPECT_NE(Sh("umount /etc/hosts 2>/dev/null || umount -l /usr").first, 0);
}

TEST_F(EscapeTest, RootInsideCannotWriteHostSysctlsReadTheKernelLogOrLoadModules) {
  const std::string before = ReadFile("/proc/sys/kernel/domainname");
  EXPECT_NE(Sh("echo escaped > /proc/sys/kernel/domainname").first, 0);
  EXPECT_NE(Sh("echo 3 > /proc/sys/vm/drop_caches").first, 0);
  EXPECT_EQ(ReadFile("/proc/sys/kernel/domainname"), before);
  EXPECT_NE(Sh("dmesg").first, 0);
  // syslog(SYSLOG_ACTION_READ_ALL) itself, whatever kernel.dmesg_restrict says.
  EXPECT_EQ(Py("import ctypes; b=ctypes.create_string_buffer(4096); "
               "l=ctypes.CDLL(None, use_errno=True); "
               "print(l.klogctl(3, b, 4096), ctypes.get_errno())"),
            "-1 1\n");
#if defined(__x86_64__)
  // finit_module (313) and delete_module (176): EPERM, or ENOSYS on a kernel without modules.
  const std::string modules =
      Py("import ctypes; l=ctypes.CDLL(None, use_errno=True); "
         "print(l.syscall(313, 0, b\"\", 0), ctypes.get_errno(), "
         "l.syscall(176, b\"ext4\", 0), ctypes.get_errno())");
  EXPECT_TRUE(modules == "-1 1 -1 1\n" || modules == "-1 38 -1 38\n") << modules;
#endif
}

TEST_F(EscapeTest, RootInsideCannotOpenRawSocketsOnTheHostsInterfaces) {
  EXPECT_EQ(Py("import socket\n"
               "try:\n"
               "  socket.socket(socket.AF_PACKET, socket.SOCK_RAW); print(\"open\")\n"
               "except PermissionError: print(\"refused\")"),
            "refused\n");
}

TEST_F(EscapeTest, EtcHoldsNoHostSecrets) {
  // Every account in /etc/shadow is a system account with a locked password.
  const std::string shadow = Sh("cat /etc/shadow").second;
  std::istringstream lines(shadow);
  std::string line;
  int entries = 0;
  while (std::getline(lines, line)) {
    ++entries;
    const std::string password = line.substr(line.find(':') + 1, 1);
    EXPECT_EQ(password, "*") << line;
  }
  EXPECT_GT(entries, 0);
  EXPECT_EQ(Sh("awk -F: '$3 >= 1000 && $3 != 65534' /etc/passwd").second, "");
  EXPECT_EQ(Sh("ls /etc/ssh/ | grep -c ssh_host_").second, "0\n");
  EXPECT_EQ(Sh("ls -A /etc/sudoers.d | wc -l").second, "0\n");
  EXPECT_EQ(Sh("grep -v '^#' /etc/sudoers | grep -c ALL").second, "2\n");
  // Root's protected host files are not there; files any host user may read are.
  EXPECT_NE(Sh("cat " + secret_).first, 0);
  EXPECT_EQ(Sh("cat " + open_file_).second, "anyone\n");
  EXPECT_EQ(Sh("ls -A /root | wc -l").second, "0\n");
  EXPECT_FALSE(PathExists(tmp_.path() + "/workers/.base/etc/shadow-"));
  // The worker may still make users and use sudo, as on a VM.
  EXPECT_EQ(Sh("useradd -m -p '*' escapee && echo 'escapee ALL=(ALL) NOPASSWD:ALL' > "
               "/etc/sudoers.d/e && chmod 440 /etc/sudoers.d/e && "
               "runuser -u escapee -- sudo -n id -u 2>/dev/null")
                .second,
            "0\n");
}

TEST_F(EscapeTest, RootsProcessesStayInsideTheWorkersLimits) {
  // Root inside cannot raise its own limits: the cgroup files are not there to write.
  EXPECT_NE(Sh("echo max > /sys/fs/cgroup/memory.max").first, 0);
  EXPECT_NE(Sh("echo -1 > /sys/fs/cgroup/memory/memory.limit_in_bytes").first, 0);
  if (support_.memory_limits) {
    const std::pair<int, std::string> hog =
        Sh("/usr/bin/python3 -c 'b=bytearray(600<<20)' >/dev/null 2>&1; echo $?");
    EXPECT_NE(hog.second, "0\n");
    EXPECT_LE(box_->MemoryBytes(), 256 << 20);
  }
  EXPECT_EQ(system("/bin/true"), 0);  // the host still forks
}

}  // namespace
}  // namespace tpuemu::sandbox
