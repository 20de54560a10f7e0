#include "sandbox/support.h"

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "sandbox/base_tree.h"
#include "sandbox/cgroup.h"
#include "sandbox/id_range.h"
#include "sandbox/idmap.h"
#include "sandbox/process.h"
#include "sandbox/worker_box.h"

namespace tpuemu::sandbox {

namespace {

constexpr const char* kOff = "worker sandboxes off: ";

std::string Absolute(const std::string& path) {
  char buf[PATH_MAX];
  return realpath(path.c_str(), buf) != nullptr ? std::string(buf) : path;
}

std::string FindHelper(const std::string& given) {
  if (!given.empty()) {
    const std::string found = internal::FindExecutable(given);
    return found.empty() ? "" : Absolute(found);
  }
  std::vector<std::string> candidates;
  char exe[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n > 0) {
    std::string self(exe, static_cast<size_t>(n));
    candidates.push_back(self.substr(0, self.rfind('/') + 1) + "tpuemu-sandbox");
  }
#ifdef TPUEMU_SANDBOX_BUILD_HELPER
  candidates.push_back(TPUEMU_SANDBOX_BUILD_HELPER);
#endif
  for (const std::string& c : candidates) {
    if (access(c.c_str(), X_OK) == 0) return Absolute(c);
  }
  return internal::FindExecutable("tpuemu-sandbox");
}

std::string FindTool(const std::string& usual, const std::string& name) {
  if (access(usual.c_str(), X_OK) == 0) return usual;
  return internal::FindExecutable(name);
}

Status MakeDirs(const std::string& path) {
  std::string cur;
  for (size_t pos = 0; pos <= path.size();) {
    size_t next = path.find('/', pos);
    if (next == std::string::npos) next = path.size();
    cur = path.substr(0, next);
    pos = next + 1;
    if (cur.empty()) continue;
    if (mkdir(cur.c_str(), 0755) != 0 && errno != EEXIST) {
      return Status::Internal("mkdir " + cur + ": " + internal::ErrnoText(errno));
    }
  }
  return Status::Ok();
}

// Runs `probe` in a forked child; returns what it returned (the number of the step that failed,
// 0 when none) and errno then, or {-1, errno} when no child could run it. Only system calls may
// run in `probe`: the caller may be multithreaded.
std::pair<int, int> RunInChild(const std::function<int()>& probe) {
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) return {-1, errno};
  const pid_t pid = fork();
  if (pid == 0) {
    const int step = probe();
    int report[2] = {step, errno};
    if (write(pipe_fds[1], report, sizeof(report)) < 0) _exit(1);
    _exit(0);
  }
  int report[2] = {-1, errno};
  close(pipe_fds[1]);
  if (pid > 0) {
    if (read(pipe_fds[0], report, sizeof(report)) != sizeof(report)) {
      report[0] = -1;
      report[1] = EIO;
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  close(pipe_fds[0]);
  return {report[0], report[1]};
}

// "<step> failed: <errno text>" for the failed step of `steps` (1-based), "" for none.
std::string ProbeFailure(std::pair<int, int> report, const std::vector<std::string>& steps) {
  if (report.first == 0) return "";
  const std::string step = report.first > 0 && report.first <= static_cast<int>(steps.size())
                               ? steps[report.first - 1]
                               : "the probe";
  return step + " failed: " + internal::ErrnoText(report.second);
}

// In a child: unshare the worker's namespaces, then mount an overlay whose upper folder is under
// `workers_dir` inside its private mount namespace (gone with the child). "" when both work.
std::string ProbeNamespacesAndOverlay(const std::string& workers_dir) {
  std::string base = workers_dir + "/.probe-XXXXXX";
  if (mkdtemp(base.data()) == nullptr) {
    return "cannot make a folder in " + workers_dir + ": " + internal::ErrnoText(errno);
  }
  const std::string lower = base + "/lower", upper = base + "/upper", work = base + "/work",
                    merged = base + "/merged";
  for (const std::string& d : {lower, upper, work, merged}) mkdir(d.c_str(), 0755);
  const std::string data = "lowerdir=" + lower + ",upperdir=" + upper + ",workdir=" + work;
  const std::pair<int, int> report = RunInChild([&] {
    if (unshare(CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWUTS | CLONE_NEWIPC) != 0) return 1;
    if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return 2;
    if (mount("overlay", merged.c_str(), "overlay", 0, data.c_str()) != 0) return 3;
    return 0;
  });
  (void)Wipe(base);
  return ProbeFailure(
      report, {"unshare of the mount, PID, UTS and IPC namespaces", "a private mount namespace",
               "an overlayfs mount with its upper folder in " + workers_dir});
}

// In a child: an idmapped copy of `workers_dir`'s mount for a user namespace of `first`, and an
// overlay over it (as a worker's /usr is made). "" when both work.
std::string ProbeIdmappedOverlay(const std::string& workers_dir, uid_t first) {
  const int userns = internal::MakeUserNamespace(first, internal::kWorkerIdCount);
  if (userns < 0) {
    return "a user namespace mapping ids from " + std::to_string(first) +
           " failed: " + internal::ErrnoText(errno);
  }
  std::string base = workers_dir + "/.probe-XXXXXX";
  if (mkdtemp(base.data()) == nullptr) {
    close(userns);
    return "cannot make a folder in " + workers_dir + ": " + internal::ErrnoText(errno);
  }
  const std::string lower = base + "/lower", upper = base + "/upper", work = base + "/work",
                    merged = base + "/merged", attach = base + "/attach";
  for (const std::string& d : {lower, upper, work, merged, attach}) mkdir(d.c_str(), 0755);
  const std::string data = "lowerdir=" + attach + ",upperdir=" + upper + ",workdir=" + work;
  const std::pair<int, int> report = RunInChild([&] {
    if (unshare(CLONE_NEWNS) != 0 || mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr)) {
      return 1;
    }
    const int fd = internal::IdmappedMount(lower.c_str(), userns, MOUNT_ATTR_RDONLY, false);
    if (fd < 0 || !internal::AttachMount(fd, attach.c_str())) return 2;
    if (mount("overlay", merged.c_str(), "overlay", 0, data.c_str()) != 0) return 3;
    return 0;
  });
  close(userns);
  (void)Wipe(base);
  return ProbeFailure(report, {"a private mount namespace", "an idmapped mount (Linux 5.12+)",
                               "an overlayfs over an idmapped folder (Linux 5.19+)"});
}

// In a child with a network namespace of its own: a bridge and a veth pair, as a slice's network
// is made. "" when both can be made.
std::string ProbeNetwork(const std::string& ip) {
  const pid_t pid = fork();
  if (pid == 0) {
    // Only system calls between fork and exec: the caller may be multithreaded.
    if (unshare(CLONE_NEWNET) != 0) _exit(10);
    const int null_fd = open("/dev/null", O_RDWR);
    dup2(null_fd, 1);
    dup2(null_fd, 2);
    const pid_t bridge = fork();
    if (bridge == 0) {
      execl(ip.c_str(), ip.c_str(), "link", "add", "b0", "type", "bridge", nullptr);
      _exit(127);
    }
    int status = 0;
    if (bridge < 0 || waitpid(bridge, &status, 0) != bridge || status != 0) _exit(11);
    execl(ip.c_str(), ip.c_str(), "link", "add", "e0", "type", "veth", "peer", "name", "e1",
          nullptr);
    _exit(127);
  }
  if (pid < 0) return "fork: " + internal::ErrnoText(errno);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return "";
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return code == 10   ? "unshare of a network namespace failed"
         : code == 11 ? "ip link add ... type bridge failed (no bridge support in the kernel?)"
                      : "ip link add ... type veth failed (no veth support in the kernel?)";
}

// "" when a worker cgroup can be made under `parent` with its limit files written.
std::string ProbeCgroup(const internal::CgroupLayout& layout, const std::string& parent,
                        const char* controller) {
  if (parent.empty()) return std::string("no ") + controller + " cgroup controller";
  const std::string name = ".probe-" + std::to_string(getpid());
  Result<std::string> dir = internal::MakeCgroup(layout, parent, name, 0, 0);
  std::string why;
  if (!dir.ok()) {
    why = dir.status().message();
  } else {
    Status removed = internal::RemoveCgroup(*dir, std::chrono::milliseconds(500));
    if (!removed.ok()) why = removed.message();
  }
  // The shared tpuemu/ folder stays: removing it would race with a worker booting elsewhere.
  return why;
}

}  // namespace

Support Probe(const std::string& workers_dir, const std::string& helper,
              const std::vector<std::string>& hidden) {
  Support s;
  const uid_t uid = geteuid();
  if (uid != 0) {
    s.reason = std::string(kOff) + "not root (uid " + std::to_string(uid) + ")";
    return s;
  }
  s.helper = FindHelper(helper);
  if (s.helper.empty()) {
    s.reason = std::string(kOff) +
               (helper.empty() ? "no tpuemu-sandbox helper next to this program, in the build "
                                 "tree or on $PATH"
                               : "helper " + helper + " is not an executable file");
    return s;
  }
  s.sshd = FindTool("/usr/sbin/sshd", "sshd");
  s.ssh_keygen = FindTool("/usr/bin/ssh-keygen", "ssh-keygen");
  if (s.sshd.empty() || s.ssh_keygen.empty()) {
    s.reason = std::string(kOff) + "no " + (s.sshd.empty() ? "sshd" : "ssh-keygen") +
               " (Debian package openssh-server)";
    return s;
  }
  if (workers_dir.empty() || workers_dir[0] != '/') {
    s.reason = std::string(kOff) + "workers folder '" + workers_dir + "' is not absolute";
    return s;
  }
  if (Status made = MakeDirs(workers_dir); !made.ok()) {
    s.reason = std::string(kOff) + made.message();
    return s;
  }
  if (std::string why = ProbeNamespacesAndOverlay(workers_dir); !why.empty()) {
    s.reason = std::string(kOff) + why;
    return s;
  }
  Result<uid_t> ids = internal::ClaimIdRange(
      static_cast<unsigned>(std::hash<std::string>{}(Absolute(workers_dir))));
  if (!ids.ok()) {
    s.reason = std::string(kOff) + ids.status().message();
    return s;
  }
  if (std::string why = ProbeIdmappedOverlay(workers_dir, *ids); !why.empty()) {
    s.reason = std::string(kOff) + "root in a worker would be root on the host: " + why;
    return s;
  }
  s.id_first = *ids;
  s.id_count = internal::kWorkerIdCount;
  s.base_dir = Absolute(workers_dir) + "/.base";
  std::vector<std::string> exclude = {Absolute(workers_dir)};
  for (const std::string& h : hidden) exclude.push_back(Absolute(h));
  if (Status built = internal::BuildBaseTree(s.base_dir, exclude); !built.ok()) {
    s.reason = std::string(kOff) + "the workers' /etc and /var: " + built.message();
    return s;
  }
  s.ip = FindTool("/usr/sbin/ip", "ip");
  if (s.ip.empty()) s.ip = FindTool("/sbin/ip", "ip");
  if (s.ip.empty()) {
    s.reason = std::string(kOff) + "no ip (Debian package iproute2)";
    return s;
  }
  if (std::string why = ProbeNetwork(s.ip); !why.empty()) {
    s.reason = std::string(kOff) + "a worker's private network: " + why;
    return s;
  }
  s.mkfs = FindTool("/usr/sbin/mkfs.ext4", "mkfs.ext4");
  if (s.mkfs.empty()) {
    s.disk_note = "boot disks off: no mkfs.ext4 (Debian package e2fsprogs)";
  } else if (access("/dev/loop-control", R_OK | W_OK) != 0) {
    s.disk_note = "boot disks off: no /dev/loop-control (" + internal::ErrnoText(errno) + ")";
  }
  s.disks = s.disk_note.empty();
  const internal::CgroupLayout layout = internal::DetectCgroups();
  // Worker cgroups are named r<first id>-...: the empty ones of a range nobody holds now (and
  // those named before ranges were) were left by a tpuemud killed with its workers, and go.
  auto stale = [](const std::string& name) {
    if (name.empty() || name[0] == '.') return false;  // a probe's, in progress
    char* end = nullptr;
    const unsigned long first =
        name.size() > 1 && name[0] == 'r' ? strtoul(name.c_str() + 1, &end, 10) : 0;
    // A name without a range is a tpuemud's from before ranges were kept: nobody makes those
    // any more, so an empty one is a leftover too.
    if (first == 0 || end == nullptr || *end != '-') return true;
    return internal::IdRangeUnowned(static_cast<uid_t>(first));
  };
  for (const std::string& parent : {layout.memory_parent, layout.pids_parent}) {
    if (!parent.empty()) internal::RemoveStaleCgroups(parent, stale);
  }
  const std::string memory_why = ProbeCgroup(layout, layout.memory_parent, "memory");
  const std::string pids_why = ProbeCgroup(layout, layout.pids_parent, "pids");
  s.memory_limits = memory_why.empty();
  s.pids_limits = pids_why.empty();
  if (!s.memory_limits) s.limits_note = "memory limits not enforced: " + memory_why;
  if (!s.pids_limits) {
    s.limits_note +=
        (s.limits_note.empty() ? "" : "; ") + std::string("pids limits not enforced: ") + pids_why;
  }
  s.ok = true;
  return s;
}

}  // namespace tpuemu::sandbox
