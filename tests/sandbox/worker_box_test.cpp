#include "sandbox/worker_box.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include "tests/sandbox/sandbox_test_util.h"

namespace tpuemu::sandbox {
namespace {

using std::chrono::milliseconds;
using testing::PathExists;
using testing::ReadFile;
using testing::WaitFor;

class WorkerBoxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(tmp_.path().empty());
    support_ = Probe(tmp_.path() + "/workers", "");
    if (!support_.ok) GTEST_SKIP() << support_.reason;
  }

  BootSpec Spec(const std::string& name) {
    BootSpec spec;
    spec.dir = tmp_.path() + "/workers/" + name;
    spec.hostname = "t1v-n-test-w-" + name;
    spec.cgroup_name = "test-" + std::to_string(getpid()) + "-" + name;
    return spec;
  }

  std::unique_ptr<WorkerBox> Boot(const BootSpec& spec) {
    Result<std::unique_ptr<WorkerBox>> box = WorkerBox::Boot(support_, spec);
    EXPECT_TRUE(box.ok()) << box.status().ToString();
    return box.ok() ? std::move(box).value() : nullptr;
  }

  // sh -c `script` inside; its exit status and output.
  static std::pair<int, std::string> Sh(const WorkerBox& box, const std::string& script,
                                        const std::string& input = "") {
    Result<std::pair<int, std::string>> r =
        box.Run({"/bin/sh", "-c", script}, input, milliseconds(5000));
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? r.value() : std::make_pair(-1, std::string());
  }

  // Starts `script` in the background inside; returns the enter process (reap it).
  static pid_t Start(const WorkerBox& box, const std::string& script) {
    Result<pid_t> pid = box.Spawn({"/bin/sh", "-c", script}, {}, SpawnIo{});
    EXPECT_TRUE(pid.ok()) << pid.status().ToString();
    return pid.ok() ? *pid : -1;
  }

  static int Reap(pid_t pid) {
    int status = 0;
    EXPECT_EQ(waitpid(pid, &status, 0), pid);
    return status;
  }

  testing::TempDir tmp_;
  Support support_;
};

TEST_F(WorkerBoxTest, HostnameAndRunExitCodeAndOutput) {
  BootSpec spec = Spec("a");
  auto box = Boot(spec);
  ASSERT_TRUE(box);
  EXPECT_TRUE(box->Alive());
  EXPECT_GT(box->init_pid(), 0);
  EXPECT_EQ(Sh(*box, "hostname").second, spec.hostname + "\n");
  EXPECT_EQ(Sh(*box, "echo out; echo err >&2; exit 3"),
            std::make_pair(3, std::string("out\nerr\n")));
  EXPECT_EQ(Sh(*box, "cat", "from stdin").second, "from stdin");
  EXPECT_EQ(Sh(*box, "pwd; echo $PATH").second,
            "/\n/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n");
  Result<std::pair<int, std::string>> slow = box->Run({"/bin/sleep", "10"}, "", milliseconds(200));
  ASSERT_FALSE(slow.ok());
  EXPECT_EQ(slow.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_EQ(box->Run({"sh"}, "", milliseconds(1000)).status().code(), StatusCode::kInvalidArgument);
  Result<std::pair<int, std::string>> missing = box->Run({"/no/such"}, "", milliseconds(2000));
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(missing->first, 127);
  // No descriptor of this process leaks in: only 0, 1, 2 (and ls's own directory).
  EXPECT_EQ(Sh(*box, "ls /proc/self/fd | wc -l").second, "4\n");
}

TEST_F(WorkerBoxTest, FilesArePrivatePersistentAndWiped) {
  BootSpec spec_a = Spec("a");
  auto a = Boot(spec_a);
  auto b = Boot(Spec("b"));
  ASSERT_TRUE(a && b);
  const std::string marker = "tpuemu-sbx-marker-" + std::to_string(getpid());
  EXPECT_EQ(
      Sh(*a, "echo root > /root/r && echo etc > /etc/" + marker + " && echo t > /tmp/" + marker)
          .first,
      0);
  EXPECT_EQ(Sh(*a, "cat /root/r /etc/" + marker + " /tmp/" + marker).second, "root\netc\nt\n");
  EXPECT_EQ(Sh(*b, "ls /root; ls /etc/" + marker + " /tmp/" + marker + " 2>/dev/null").second, "");
  EXPECT_FALSE(PathExists("/etc/" + marker));
  EXPECT_FALSE(PathExists("/tmp/" + marker));
  // The host's files are there beneath.
  EXPECT_EQ(Sh(*b, "test -s /etc/os-release && test -x /usr/bin/env && test -x /bin/sh").first, 0);

  a->Stop(milliseconds(1000));
  EXPECT_FALSE(a->Alive());
  EXPECT_EQ(a->init_pid(), 0);
  a = Boot(spec_a);
  ASSERT_TRUE(a);
  EXPECT_EQ(Sh(*a, "cat /root/r /etc/" + marker + " /tmp/" + marker).second, "root\netc\nt\n");
  a.reset();
  EXPECT_TRUE(Wipe(spec_a.dir).ok());
  EXPECT_FALSE(PathExists(spec_a.dir));
  EXPECT_TRUE(Wipe(spec_a.dir).ok());  // already gone
  a = Boot(spec_a);
  ASSERT_TRUE(a);
  EXPECT_EQ(Sh(*a, "ls /root; cat /etc/" + marker + " 2>/dev/null").second, "");
}

TEST_F(WorkerBoxTest, SeesOnlyItsOwnProcesses) {
  auto a = Boot(Spec("a"));
  auto b = Boot(Spec("b"));
  ASSERT_TRUE(a && b);
  const pid_t sleeper = Start(*a, "exec sleep 30");
  ASSERT_TRUE(
      WaitFor([&] { return Sh(*a, "ps -e -o comm=").second.find("sleep") != std::string::npos; }));
  const std::string in_b = Sh(*b, "ps -e -o pid=,comm=").second;
  EXPECT_EQ(in_b.find("sleep"), std::string::npos) << in_b;
  // The init and the shell that lists them.
  EXPECT_EQ(Sh(*b, "set -- /proc/[0-9]*; echo $# $1").second, "2 /proc/1\n");
  EXPECT_EQ(Sh(*b, "cat /proc/1/comm").second, "tpuemu-sandbox\n");
  a->Kill();
  EXPECT_EQ(WEXITSTATUS(Reap(sleeper)), 128 + SIGKILL);
}

TEST_F(WorkerBoxTest, BindsAppearAndReadOnlyBindsAreReadOnly) {
  const std::string ro = tmp_.path() + "/ro";
  const std::string rw = tmp_.path() + "/rw";
  mkdir(ro.c_str(), 0755);
  mkdir(rw.c_str(), 0755);
  testing::WriteFile(ro + "/f", "hello");
  testing::WriteFile(tmp_.path() + "/single", "one file");
  BootSpec spec = Spec("a");
  spec.binds = {{ro, "/mnt/ro", true},
                {rw, "/srv/data/rw", false},
                {tmp_.path() + "/single", "/etc/tpuemu/single", true}};
  auto box = Boot(spec);
  ASSERT_TRUE(box);
  EXPECT_EQ(Sh(*box, "cat /mnt/ro/f /etc/tpuemu/single").second,
            "hello"
            "one file");
  EXPECT_NE(Sh(*box, "touch /mnt/ro/g 2>/dev/null").first, 0);
  EXPECT_NE(Sh(*box, "echo x > /etc/tpuemu/single").first, 0);
  EXPECT_EQ(Sh(*box, "echo w > /srv/data/rw/w").first, 0);
  EXPECT_EQ(ReadFile(rw + "/w"), "w\n");
  EXPECT_FALSE(PathExists(ro + "/g"));

  BootSpec bad = Spec("bad");
  bad.binds = {{tmp_.path() + "/missing", "/mnt/x", true}};
  Result<std::unique_ptr<WorkerBox>> failed = WorkerBox::Boot(support_, bad);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), StatusCode::kInternal);
  EXPECT_NE(failed.status().message().find("bind " + tmp_.path() + "/missing"), std::string::npos)
      << failed.status().message();
}

TEST_F(WorkerBoxTest, StopSendsSigtermThenWaits) {
  BootSpec spec = Spec("a");
  auto box = Boot(spec);
  ASSERT_TRUE(box);
  const pid_t pid = Start(*box,
                          "trap 'echo bye > /root/marker; exit 0' TERM; touch /root/ready; "
                          "while :; do sleep 0.05; done");
  ASSERT_TRUE(WaitFor([&] { return PathExists(spec.dir + "/fs/root/ready"); }));
  const auto start = std::chrono::steady_clock::now();
  box->Stop(milliseconds(5000));
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(2000));
  EXPECT_FALSE(box->Alive());
  Reap(pid);
  box = Boot(spec);
  ASSERT_TRUE(box);
  EXPECT_EQ(Sh(*box, "cat /root/marker").second, "bye\n");
  box->Stop(milliseconds(1000));
  box->Stop(milliseconds(1000));  // idempotent
  box->Kill();
}

TEST_F(WorkerBoxTest, StopKillsWhatIgnoresSigtermAfterTheGrace) {
  BootSpec spec = Spec("a");
  auto box = Boot(spec);
  ASSERT_TRUE(box);
  const pid_t init = box->init_pid();
  const pid_t pid = Start(*box, "trap '' TERM; touch /root/ready; while :; do sleep 0.05; done");
  ASSERT_TRUE(WaitFor([&] { return PathExists(spec.dir + "/fs/root/ready"); }));
  const auto start = std::chrono::steady_clock::now();
  box->Stop(milliseconds(300));
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_GE(took, milliseconds(300));
  EXPECT_LT(took, milliseconds(2000));
  EXPECT_FALSE(box->Alive());
  EXPECT_FALSE(PathExists("/proc/" + std::to_string(init)));
  EXPECT_EQ(WEXITSTATUS(Reap(pid)), 128 + SIGKILL);
  EXPECT_EQ(box->Spawn({"/bin/true"}, {}, SpawnIo{}).status().code(),
            StatusCode::kFailedPrecondition);
  EXPECT_TRUE(box->SignalAll(SIGTERM).ok());  // nothing to signal
}

TEST_F(WorkerBoxTest, KillAndSignalAll) {
  BootSpec spec = Spec("a");
  auto box = Boot(spec);
  ASSERT_TRUE(box);
  const pid_t pid = Start(*box,
                          "trap 'echo usr1 > /root/got' USR1; touch /root/ready; "
                          "while :; do sleep 0.05; done");
  ASSERT_TRUE(WaitFor([&] { return PathExists(spec.dir + "/fs/root/ready"); }));
  ASSERT_TRUE(box->SignalAll(SIGUSR1).ok());
  EXPECT_TRUE(WaitFor([&] { return ReadFile(spec.dir + "/fs/root/got") == "usr1\n"; }));
  EXPECT_TRUE(box->Alive());
  const pid_t init = box->init_pid();
  box->Kill();
  EXPECT_FALSE(box->Alive());
  EXPECT_FALSE(PathExists("/proc/" + std::to_string(init)));
  EXPECT_EQ(WEXITSTATUS(Reap(pid)), 128 + SIGKILL);
  box->Kill();  // idempotent
}

TEST_F(WorkerBoxTest, PidsLimitContainsAForkBomb) {
  if (!support_.pids_limits) GTEST_SKIP() << support_.limits_note;
  BootSpec spec = Spec("a");
  spec.pids_limit = 50;
  auto box = Boot(spec);
  ASSERT_TRUE(box);
  // Every process of this bomb keeps forking: at the limit a failed fork ends one (dash exits
  // on "Cannot fork"), which frees a slot for the others, so the count stays near the limit
  // until Stop. (The classic `f|f&` bomb forks once and exits: at the limit it can die out
  // between two samples of a loaded machine, which once left the sampled peak at 1.)
  const pid_t bomb = Start(*box, "f(){ while :; do f & sleep 0.02; done; }; f");
  int64_t most = 0;
  // The bomb grows (however loaded the machine is) and never past the limit.
  EXPECT_TRUE(WaitFor(
      [&] {
        most = std::max(most, box->ProcessCount());
        return most >= 20;
      },
      milliseconds(20000)));
  WaitFor(
      [&] {
        most = std::max(most, box->ProcessCount());
        return false;
      },
      milliseconds(500));
  EXPECT_GE(most, 20);
  EXPECT_LE(most, 50);
  // The host still forks.
  EXPECT_EQ(system("/bin/true"), 0);
  box->Stop(milliseconds(100));
  EXPECT_FALSE(box->Alive());
  Reap(bomb);
}

TEST_F(WorkerBoxTest, MemoryLimitStopsAHog) {
  if (!support_.memory_limits) GTEST_SKIP() << support_.limits_note;
  if (!PathExists("/usr/bin/python3")) GTEST_SKIP() << "no /usr/bin/python3";
  BootSpec spec = Spec("a");
  spec.memory_limit_bytes = 64 << 20;
  auto box = Boot(spec);
  ASSERT_TRUE(box);
  Result<std::pair<int, std::string>> small =
      box->Run({"/usr/bin/python3", "-c", "b=bytearray(8<<20)"}, "", milliseconds(5000));
  ASSERT_TRUE(small.ok());
  EXPECT_EQ(small->first, 0) << small->second;
  Result<std::pair<int, std::string>> hog =
      box->Run({"/usr/bin/python3", "-c", "b=bytearray(300<<20)"}, "", milliseconds(5000));
  ASSERT_TRUE(hog.ok()) << hog.status().ToString();
  EXPECT_NE(hog->first, 0);
  EXPECT_GT(box->MemoryBytes(), 0);
  EXPECT_LE(box->MemoryBytes(), 64 << 20);
}

TEST_F(WorkerBoxTest, NothingOutlivesItsOwnerKilledWithSigkill) {
  BootSpec spec = Spec("a");
  int report[2];
  ASSERT_EQ(pipe(report), 0);
  const pid_t owner = fork();
  ASSERT_GE(owner, 0);
  if (owner == 0) {
    // The owner: boots a worker with a process in it, says the init's PID, waits to be killed.
    close(report[0]);
    Result<std::unique_ptr<WorkerBox>> box = WorkerBox::Boot(support_, spec);
    if (!box.ok()) _exit(1);
    Result<pid_t> sleeper = (*box)->Spawn({"/bin/sleep", "30"}, {}, SpawnIo{});
    const pid_t init = (*box)->init_pid();
    if (!sleeper.ok() || write(report[1], &init, sizeof(init)) != sizeof(init)) _exit(1);
    for (;;) pause();
  }
  close(report[1]);
  pid_t init = 0;
  ASSERT_EQ(read(report[0], &init, sizeof(init)), static_cast<ssize_t>(sizeof(init)));
  close(report[0]);
  ASSERT_TRUE(PathExists("/proc/" + std::to_string(init)));
  // A worker's cgroups are named by the id range of the tpuemud that made them.
  const std::string cgroup = "r" + std::to_string(support_.id_first) + "-" + spec.cgroup_name;
  const std::string memory_procs = "/sys/fs/cgroup/memory/tpuemu/" + cgroup + "/cgroup.procs";
  const std::string pids_procs = "/sys/fs/cgroup/pids/tpuemu/" + cgroup + "/cgroup.procs";
  ASSERT_TRUE(WaitFor([&] { return !ReadFile(pids_procs).empty() || !support_.pids_limits; }));
  kill(owner, SIGKILL);
  Reap(owner);
  EXPECT_TRUE(WaitFor([&] { return !PathExists("/proc/" + std::to_string(init)); }));
  // Every process of the worker was in its cgroups (v1 layout, as on the CI hosts).
  for (const std::string& procs : {memory_procs, pids_procs}) {
    if (!PathExists(procs)) continue;
    EXPECT_TRUE(WaitFor([&] { return ReadFile(procs).empty(); }))
        << procs << ": " << ReadFile(procs);
  }
  // The cgroups the killed owner left behind go at the next Probe (a restarted tpuemud's): no
  // process, mount, loop device or cgroup of a gone worker remains.
  (void)Probe(tmp_.path() + "/workers", "");
  EXPECT_FALSE(PathExists(memory_procs.substr(0, memory_procs.rfind('/'))));
  EXPECT_FALSE(PathExists(pids_procs.substr(0, pids_procs.rfind('/'))));
  EXPECT_EQ(ReadFile("/proc/self/mountinfo").find(spec.dir), std::string::npos);
}

TEST(WipeTest, DoesNotFollowSymlinksOut) {
  testing::TempDir tmp;
  const std::string outside = tmp.path() + "/outside";
  const std::string dir = tmp.path() + "/worker";
  mkdir(outside.c_str(), 0755);
  testing::WriteFile(outside + "/keep", "keep");
  mkdir(dir.c_str(), 0755);
  mkdir((dir + "/sub").c_str(), 0000);
  ASSERT_EQ(symlink(outside.c_str(), (dir + "/link").c_str()), 0);
  ASSERT_EQ(symlink((outside + "/keep").c_str(), (dir + "/sub-link").c_str()), 0);
  testing::WriteFile(dir + "/file", "x");
  ASSERT_TRUE(Wipe(dir).ok());
  EXPECT_FALSE(PathExists(dir));
  EXPECT_EQ(ReadFile(outside + "/keep"), "keep");
}

TEST(HostKeyTest, MadeOnceThenReused) {
  testing::TempDir tmp;
  Support support = Probe(tmp.path() + "/workers", "");
  if (support.ssh_keygen.empty()) GTEST_SKIP() << support.reason;
  const std::string path = tmp.path() + "/keys/ssh_host_ed25519_key";
  Result<std::string> first = EnsureHostKey(support, path);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->rfind("ssh-ed25519 AAAA", 0), 0u) << *first;
  EXPECT_EQ(first->find(' ', 12), std::string::npos) << *first;
  Result<std::string> second = EnsureHostKey(support, path);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(*first, *second);
}

}  // namespace
}  // namespace tpuemu::sandbox
