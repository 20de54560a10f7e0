// The escape suite, sandbox level: root inside a worker probes the host as a tenant who is root in
// their own TPU VM would, and each probe asserts containment (docs/sandbox.md, "What root inside
// can and cannot do"). The service-level probes (other projects' metadata, the API, floods) are in
// tests/e2e/workers_escape_test.cpp.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
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

// Loop devices whose backing file is under `dir`.
int LoopDevicesOf(const std::string& dir) {
  int n = 0;
  for (int i = 0; i < 256; ++i) {
    const std::string backing =
        ReadFile("/sys/block/loop" + std::to_string(i) + "/loop/backing_file");
    if (!backing.empty() && backing.rfind(dir, 0) == 0) ++n;
  }
  return n;
}

TEST_F(EscapeTest, FillingItsBootDiskIsEnospcInsideAndNothingOutside) {
  if (!support_.disks) GTEST_SKIP() << support_.disk_note;
  BootSpec spec;
  spec.dir = tmp_.path() + "/workers/disk";
  spec.hostname = "t1v-n-escape-w-1";
  spec.cgroup_name = "escape-disk-" + std::to_string(getpid());
  spec.disk_bytes = int64_t{64} << 20;
  Result<std::unique_ptr<WorkerBox>> booted = WorkerBox::Boot(support_, spec);
  ASSERT_TRUE(booted.ok()) << booted.status().ToString();
  std::unique_ptr<WorkerBox> box = std::move(booted).value();
  auto sh = [&](const std::string& script) {
    Result<std::pair<int, std::string>> r =
        box->Run({"/bin/sh", "-c", script}, "", milliseconds(20000));
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? r.value() : std::make_pair(-1, std::string());
  };
  // df / inside shows the disk; / /home /tmp /etc's changes are on it.
  const int64_t size = std::stoll(sh("df -B1 --output=size / | tail -1").second);
  EXPECT_GT(size, int64_t{40} << 20);
  EXPECT_LE(size, int64_t{64} << 20);
  EXPECT_EQ(sh("df --output=source / /home /tmp | tail -n +2 | sort -u | wc -l").second, "1\n");
  struct statvfs before {};
  ASSERT_EQ(statvfs(tmp_.path().c_str(), &before), 0);
  const std::pair<int, std::string> fill =
      sh("dd if=/dev/zero of=/tmp/fill bs=1M count=200 2>&1; echo rc=$?");
  EXPECT_NE(fill.second.find("No space left on device"), std::string::npos) << fill.second;
  struct statvfs after {};
  ASSERT_EQ(statvfs(tmp_.path().c_str(), &after), 0);
  const int64_t taken =
      (static_cast<int64_t>(before.f_bavail) - static_cast<int64_t>(after.f_bavail)) *
      static_cast<int64_t>(after.f_frsize);
  EXPECT_LT(taken, int64_t{80} << 20) << "the host lost " << (taken >> 20) << " MiB";
  // Root's files persist on the disk across a stop; the disk leaves no loop device behind.
  ASSERT_EQ(sh("rm /tmp/fill && echo kept > /root/kept").first, 0);
  EXPECT_EQ(LoopDevicesOf(spec.dir), 1);
  box->Stop(milliseconds(1000));
  EXPECT_TRUE(testing::WaitFor([&] { return LoopDevicesOf(spec.dir) == 0; }));
  booted = WorkerBox::Boot(support_, spec);
  ASSERT_TRUE(booted.ok()) << booted.status().ToString();
  box = std::move(booted).value();
  EXPECT_EQ(sh("cat /root/kept").second, "kept\n");
  box->Kill();
  EXPECT_TRUE(testing::WaitFor([&] { return LoopDevicesOf(spec.dir) == 0; }));
  box.reset();
  EXPECT_TRUE(Wipe(spec.dir).ok());
  EXPECT_FALSE(PathExists(spec.dir + "/disk.img"));

  // Below the host's free-space floor, no worker boots.
  spec.host_free_floor_bytes = int64_t{1} << 60;
  Result<std::unique_ptr<WorkerBox>> refused = WorkerBox::Boot(support_, spec);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(refused.status().message().find("below the floor"), std::string::npos);
}

}  // namespace
}  // namespace tpuemu::sandbox
