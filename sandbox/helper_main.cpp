// tpuemu-sandbox: the small static helper that builds a worker sandbox and runs commands in it
// (sandbox/worker_box.h is its only caller; docs/sandbox.md walks through it).
//
//   tpuemu-sandbox boot --dir DIR --hostname NAME --ids FIRST COUNT --base BASE [--lifeline-fd FD]
//                       [--cgroup CGDIR]... [--bind HOST INSIDE ro|rw]...
//                       [--tpu CHIPS DEVICE_ID accel|vfio]
//     Makes the worker's user namespace (ids 0..COUNT-1 inside are FIRST.. on the host), joins
//     the cgroups, unshares a PID namespace and forks the worker's init (PID 1 inside), which
//     unshares the mount, UTS and IPC namespaces, builds the root under DIR (the host's /usr and
//     BASE's /etc, /var, /opt, /srv beneath, idmapped), pivots into it, and becomes root of the
//     user namespace: root inside is FIRST outside, with no power over the host's namespaces.
//     Prints "ready <init host pid>" on stderr once the init waits, or one line naming the failed
//     step. Stays outside the namespaces until the init exits (exits with its status), or kills
//     the init when FD (the lifeline) reads EOF: its owner is gone.
//   tpuemu-sandbox enter --pid INIT [--cgroup CGDIR]... [--signal N] -- PATH ARG...
//     Joins the namespaces of INIT, forks; the child joins the cgroups and INIT's user namespace
//     as root there, and execs PATH inside with this process's environment; exits with the
//     command's status (128 + signal). Signals TERM, INT, HUP, QUIT, USR1 and USR2 are forwarded to
//     the command, ALRM as KILL; the command dies (SIGKILL) with this process. With --signal: sends
//     signal N to every process inside but the init, and exits 0. Why ALRM: a process whose parent
//     is outside its PID namespace is reparented, when that parent dies, to the host's init, not
//     the worker's; until the host's init reaps it the worker's init cannot finish dying. So this
//     process should outlive its command: SIGALRM ends the command first, SIGKILL here is the last
//     resort.
//
// Single-threaded, no allocation after fork that matters, statically linked (an idle init then
// costs a few hundred KiB), built without sanitizers.
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/loop.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "sandbox/idmap.h"
#include "sandbox/tpu_devices.h"

extern char** environ;

namespace {

struct BindArg {
  std::string host;
  std::string inside;
  bool read_only = true;
};

struct Options {
  std::string dir;
  std::string hostname;
  std::string base;          // the mirrored /etc, /var, /opt, /srv (sandbox/base_tree.h)
  long long disk_bytes = 0;  // the boot disk's size; 0: no disk (files on the host's)
  std::string mkfs;          // mkfs.ext4
  std::string ip;            // iproute2's ip
  pid_t network = 0;         // a process in the slice's network namespace (`net` mode's); 0: none
  std::string address;       // the worker's address on it, with its prefix ("10.0.2.2/8")
  uid_t id_first = 0;
  uid_t id_count = 0;
  int lifeline_fd = -1;
  std::vector<std::string> cgroups;
  std::vector<BindArg> binds;
  tpuemu::sandbox::TpuDevices tpu;  // the host's chips as stand-ins (tpu_devices.h)
  pid_t pid = 0;
  int signo = 0;
  std::vector<std::string> argv;
};

const char* g_mode = "tpuemu-sandbox";
// Host id of root inside (Options::id_first): what the worker's own folders and tmpfs are owned by.
uid_t g_root = 0;
// The worker's own files: <dir>/fs, or fs on its boot disk (MountDisk).
std::string g_fs;

[[noreturn]] void Fail(const std::string& step, int err) {
  dprintf(2, "%s: %s: %s\n", g_mode, step.c_str(), strerror(err));
  _exit(1);
}

[[noreturn]] void Usage(const char* what) {
  dprintf(2, "%s: bad arguments: %s\n", g_mode, what);
  _exit(2);
}

// Closes every descriptor >= 3 except `keep`: nothing of tpuemud's leaks into a worker.
void CloseFdsExcept(std::vector<int> keep) {
  std::sort(keep.begin(), keep.end());
  unsigned first = 3;
  auto close_range_or_loop = [](unsigned lo, unsigned hi) {
    if (lo > hi) return;
    if (syscall(SYS_close_range, lo, hi, 0) == 0) return;
    // close_range needs Linux 5.9; otherwise close what /proc says is open.
    DIR* d = opendir("/proc/self/fd");
    if (d == nullptr) return;
    std::vector<int> fds;
    while (dirent* e = readdir(d)) {
      const int fd = atoi(e->d_name);
      if (fd >= static_cast<int>(lo) && static_cast<unsigned>(fd) <= hi && fd != dirfd(d)) {
        fds.push_back(fd);
      }
    }
    closedir(d);
    for (int fd : fds) close(fd);
  };
  for (int fd : keep) {
    if (fd < 3 || static_cast<unsigned>(fd) < first) continue;
    if (static_cast<unsigned>(fd) > first) close_range_or_loop(first, fd - 1);
    first = fd + 1;
  }
  close_range_or_loop(first, ~0U);
}

// The cgroup.procs files of `cgroups`, opened while the host's /sys/fs/cgroup is in reach.
std::vector<int> OpenCgroups(const std::vector<std::string>& cgroups) {
  std::vector<int> fds;
  for (const std::string& cg : cgroups) {
    const int fd = open((cg + "/cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) Fail("open cgroup " + cg, errno);
    fds.push_back(fd);
  }
  return fds;
}

// Moves the calling process ("0": itself, whatever its PID namespace) into the cgroups. Only the
// worker's own processes join, never this helper: a helper's zombie, not yet reaped by its parent,
// would keep the cgroup busy.
void JoinCgroups(const std::vector<std::string>& cgroups, const std::vector<int>& fds) {
  for (size_t i = 0; i < fds.size(); ++i) {
    if (write(fds[i], "0", 1) != 1) Fail("join cgroup " + cgroups[i], errno);
    close(fds[i]);
  }
}

// mkdir -p; a folder made here gets `mode` (umask aside).
void MakeDirs(const std::string& path, mode_t mode) {
  std::string cur;
  size_t pos = 0;
  while (pos <= path.size()) {
    size_t next = path.find('/', pos);
    if (next == std::string::npos) next = path.size();
    cur = path.substr(0, next);
    pos = next + 1;
    if (cur.empty()) continue;
    if (mkdir(cur.c_str(), mode) == 0) {
      chmod(cur.c_str(), mode);
    } else if (errno != EEXIST) {
      Fail("mkdir " + cur, errno);
    }
  }
}

void Mount(const char* source, const std::string& target, const char* type, unsigned long flags,
           const char* data, const std::string& step) {
  if (mount(source, target.c_str(), type, flags, data) != 0) Fail(step, errno);
}

void BindMount(const std::string& source, const std::string& target, bool read_only,
               bool recursive) {
  Mount(source.c_str(), target, nullptr, MS_BIND | (recursive ? MS_REC : 0), nullptr,
        "bind " + source + " on " + target);
  if (read_only) {
    Mount(nullptr, target, nullptr, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV,
          nullptr, "make " + target + " read-only");
  }
}

// Makes an empty file or folder at `target` (and its parents) to mount `source` on.
void MakeMountPoint(const std::string& source, const std::string& target) {
  struct stat st {};
  if (stat(source.c_str(), &st) != 0) Fail("stat " + source, errno);
  const size_t slash = target.rfind('/');
  if (slash != std::string::npos && slash > 0) MakeDirs(target.substr(0, slash), 0755);
  if (S_ISDIR(st.st_mode)) {
    if (mkdir(target.c_str(), 0755) != 0 && errno != EEXIST) Fail("mkdir " + target, errno);
  } else {
    const int fd = open(target.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) Fail("create " + target, errno);
    close(fd);
  }
  lchown(target.c_str(), g_root, g_root);  // covered by the mount: cosmetic, so no failure
}

bool Contains(const std::string& folder, const std::string& path) {
  return path == folder || path.rfind(folder + "/", 0) == 0;
}

// tmpfs options that make its root folder root's inside.
std::string OwnerOptions() {
  return "uid=" + std::to_string(g_root) + ",gid=" + std::to_string(g_root);
}

// Gives `path` to root inside the worker (the host's g_root).
void Own(const std::string& path) {
  if (lchown(path.c_str(), g_root, g_root) != 0) Fail("chown " + path, errno);
}

// mkdir -p of a folder root inside owns (the parents made too).
void MakeOwnedDirs(const std::string& path, mode_t mode) {
  MakeDirs(path, mode);
  Own(path);
}

// The worker's own folder `name` (fs/<name>/upper, so that an overlay may replace it later).
void PrivateDir(const std::string& root, const std::string& name, mode_t mode) {
  const std::string own = g_fs + "/" + name;
  MakeDirs(g_fs, 0755);
  if (mkdir(own.c_str(), mode) == 0) {
    chmod(own.c_str(), mode);
    Own(own);
  } else if (errno != EEXIST) {
    Fail("mkdir " + own, errno);
  }
  MakeDirs(root + "/" + name, 0755);
  BindMount(own, root + "/" + name, false, false);
}

// Mounts `lower` (a host folder) idmapped for the worker's user namespace at `at`: a file the
// host's root owns is owned by root inside, while the worker's own ids are unprivileged outside.
void AttachIdmapped(const std::string& lower, const std::string& at, int userns_fd,
                    uint64_t attrs) {
  using namespace tpuemu::sandbox::internal;
  const int fd = IdmappedMount(lower.c_str(), userns_fd, attrs, false);
  if (fd < 0) Fail("idmap " + lower, errno);
  if (!AttachMount(fd, at.c_str())) Fail("attach idmapped " + lower + " at " + at, errno);
}

// /<name> as the host's (or the base tree's) read-only and idmapped beneath the worker's upper
// folder.
void OverlayDir(const Options& o, const std::string& root, const std::string& name, int userns_fd) {
  const bool mirrored = name == "etc" || name == "var" || name == "opt" || name == "srv";
  const std::string host = mirrored ? o.base + "/" + name : "/" + name;
  const std::string upper = g_fs + "/" + name + "/upper";
  const std::string work = g_fs + "/" + name + "/work";
  struct stat st {};
  if (stat(host.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || Contains(host, o.dir)) {
    // Missing on the host, or it holds the worker's own files (an overlay would overlap them).
    MakeOwnedDirs(upper, 0755);
    MakeDirs(root + "/" + name, 0755);
    BindMount(upper, root + "/" + name, false, false);
    return;
  }
  MakeDirs(g_fs + "/" + name, 0755);
  if (mkdir(upper.c_str(), 0755) == 0) {
    // The merged folder's owner and mode are the upper folder's: the lower's, as root inside.
    if (lchown(upper.c_str(), g_root + st.st_uid, g_root + st.st_gid) != 0 ||
        chmod(upper.c_str(), st.st_mode & 07777) != 0) {
      Fail("own " + upper, errno);
    }
  } else if (errno != EEXIST) {
    Fail("mkdir " + upper, errno);
  }
  MakeDirs(work, 0755);
  MakeDirs(root + "/" + name, 0755);
  // "volatile" (Linux 5.10+): no syncfs of the whole upper file system when the worker's mount
  // namespace goes, which costs hundreds of milliseconds per overlay on a busy disk. The price:
  // writes still in the page cache when the host crashes are lost, and overlayfs leaves a marker
  // that refuses the next mount; the upper folder is what a clean stop left, so the marker goes.
  const std::string marker = work + "/work/incompat/volatile";
  if (rmdir((marker + "/dirty").c_str()) != 0) unlink((marker + "/dirty").c_str());
  rmdir(marker.c_str());
  rmdir((work + "/work/incompat").c_str());
  // The idmapped lower is attached only while the overlay is mounted: overlayfs keeps a private
  // copy of each layer, so nothing of it stays in the worker's tree.
  const std::string attach = o.dir + "/.lower";
  MakeDirs(attach, 0700);
  AttachIdmapped(host, attach, userns_fd, MOUNT_ATTR_RDONLY);
  const std::string data = "lowerdir=" + attach + ",upperdir=" + upper + ",workdir=" + work;
  const std::string fast = "volatile," + data;
  if (mount("overlay", (root + "/" + name).c_str(), "overlay", 0, fast.c_str()) != 0) {
    Mount("overlay", root + "/" + name, "overlay", 0, data.c_str(), "mount overlay " + host);
  }
  if (umount2(attach.c_str(), MNT_DETACH) != 0) Fail("detach " + attach, errno);
}

void BuildDev(const std::string& root) {
  const std::string dev = root + "/dev";
  MakeDirs(dev, 0755);
  Mount("tmpfs", dev, "tmpfs", MS_NOSUID | MS_NOEXEC,
        ("mode=0755,size=64k," + OwnerOptions()).c_str(), "mount /dev");
  for (const char* node : {"null", "zero", "full", "random", "urandom", "tty"}) {
    const std::string target = dev + "/" + node;
    const int fd = open(target.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0) Fail("create " + target, errno);
    close(fd);
    BindMount(std::string("/dev/") + node, target, false, false);
  }
  MakeDirs(dev + "/pts", 0755);
  // Terminals belong to group tty (5) inside.
  Mount("devpts", dev + "/pts", "devpts", MS_NOSUID | MS_NOEXEC,
        ("newinstance,ptmxmode=0666,mode=0620,gid=" + std::to_string(g_root + 5)).c_str(),
        "mount /dev/pts");
  if (symlink("pts/ptmx", (dev + "/ptmx").c_str()) != 0) Fail("symlink /dev/ptmx", errno);
  MakeDirs(dev + "/shm", 01777);
  Mount("tmpfs", dev + "/shm", "tmpfs", MS_NOSUID | MS_NODEV,
        ("mode=1777,size=64m," + OwnerOptions()).c_str(), "mount /dev/shm");
  const char* links[][2] = {{"/proc/self/fd", "fd"},
                            {"/proc/self/fd/0", "stdin"},
                            {"/proc/self/fd/1", "stdout"},
                            {"/proc/self/fd/2", "stderr"}};
  for (const auto& l : links) {
    if (symlink(l[0], (dev + "/" + l[1]).c_str()) != 0)
      Fail(std::string("symlink /dev/") + l[1], errno);
  }
}

// The root: a folder on the boot disk (what `df /` shows inside), or a small tmpfs without one.
// Either way only mount points and the /bin, /lib* symlinks are made in it here.
void BuildRoot(const Options& o, const std::string& root, const std::string& disk, int userns_fd) {
  MakeDirs(root, 0755);
  if (!disk.empty()) {
    MakeOwnedDirs(disk + "/rootfs", 0755);
    BindMount(disk + "/rootfs", root, false, false);
  } else {
    Mount("tpuemu-root", root, "tmpfs", MS_NOSUID, ("mode=0755,size=16m," + OwnerOptions()).c_str(),
          "mount the root tmpfs");
  }
  for (const char* name : {"usr", "etc", "var", "opt", "srv"}) OverlayDir(o, root, name, userns_fd);
  // /bin /sbin /lib*: the host's symlinks into /usr (usrmerge), or overlays where they are folders.
  if (DIR* d = opendir("/")) {
    while (dirent* e = readdir(d)) {
      const std::string name = e->d_name;
      if (name != "bin" && name != "sbin" && name.rfind("lib", 0) != 0) continue;
      const std::string host = "/" + name;
      struct stat st {};
      if (lstat(host.c_str(), &st) != 0) continue;
      if (S_ISLNK(st.st_mode)) {
        char target[4096];
        const ssize_t n = readlink(host.c_str(), target, sizeof(target) - 1);
        if (n < 0) Fail("readlink " + host, errno);
        target[n] = '\0';
        if (symlink(target, (root + host).c_str()) != 0 && errno != EEXIST) {
          Fail("symlink " + host, errno);
        }
      } else if (S_ISDIR(st.st_mode)) {
        OverlayDir(o, root, name, userns_fd);
      }
    }
    closedir(d);
  }
  PrivateDir(root, "root", 0700);
  PrivateDir(root, "home", 0755);
  PrivateDir(root, "tmp", 01777);
  PrivateDir(root, "mnt", 0755);
  PrivateDir(root, "media", 0755);
  MakeDirs(root + "/proc", 0555);
  Mount("proc", root + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr, "mount /proc");
  MakeDirs(root + "/sys", 0555);
  // Not recursive: the host's cgroup and other mounts below /sys stay out.
  BindMount("/sys", root + "/sys", true, false);
  Mount(nullptr, root + "/sys", nullptr,
        MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr,
        "make /sys read-only");
  BuildDev(root);
  MakeDirs(root + "/run", 0755);
  Mount("tmpfs", root + "/run", "tmpfs", MS_NOSUID | MS_NODEV,
        ("mode=0755,size=16m," + OwnerOptions()).c_str(), "mount /run");
  MakeOwnedDirs(root + "/run/sshd", 0755);  // sshd wants it root's (inside) and not writable
  MakeOwnedDirs(root + "/run/lock", 01777);
  const std::string tpu = tpuemu::sandbox::BuildTpuDevices(root, o.tpu, g_root);
  if (!tpu.empty()) {
    dprintf(2, "%s: TPU devices: %s\n", g_mode, tpu.c_str());
    _exit(1);
  }
}

// After fork: dies now if the parent already died (PR_SET_PDEATHSIG would never fire).
// `alive_fd` is a pipe's read end whose write end only the parent holds.
void DieWithParent(int alive_fd) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  pollfd p{alive_fd, POLLIN, 0};
  if (poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLERR))) _exit(1);
  close(alive_fd);
}

bool OnlyInitLeft() {
  DIR* d = opendir("/proc");
  if (d == nullptr) return true;
  bool only = true;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] >= '1' && e->d_name[0] <= '9' && strcmp(e->d_name, "1") != 0) {
      only = false;
      break;
    }
  }
  closedir(d);
  return only;
}

[[noreturn]] void InitLoop() {
  sigset_t set;
  sigemptyset(&set);
  for (int s : {SIGCHLD, SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2}) sigaddset(&set, s);
  sigprocmask(SIG_BLOCK, &set, nullptr);
  bool terminating = false;
  for (;;) {
    int sig;
    if (terminating) {
      // Processes not ours (spawned by `enter`) end without a SIGCHLD here: look every 20 ms.
      timespec ts{0, 20 * 1000 * 1000};
      sig = sigtimedwait(&set, nullptr, &ts);
    } else {
      sig = sigwaitinfo(&set, nullptr);
    }
    while (waitpid(-1, nullptr, WNOHANG) > 0) {
    }
    if (sig == SIGTERM && !terminating) {
      terminating = true;
      kill(-1, SIGTERM);
    }
    if (terminating && OnlyInitLeft()) _exit(0);
  }
}

// Says "ready <pid>" on stderr (what StartHelper waits for), then points the standard streams at
// /dev/null: whoever read "ready" stops listening, so nothing more goes there.
void ReportReady(pid_t pid) {
  dprintf(2, "ready %d\n", static_cast<int>(pid));
  const int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null_fd >= 0) {
    dup2(null_fd, 0);
    dup2(null_fd, 1);
    dup2(null_fd, 2);
    close(null_fd);
  }
}

// Runs argv (a host program) to completion; its exit status, or -1.
// `input` (a few KiB at most: it must fit the pipe) is its standard input.
int RunHostProgram(const std::vector<std::string>& argv, const std::string& input = "") {
  int in[2] = {-1, -1};
  if (!input.empty() && pipe2(in, O_CLOEXEC) != 0) return -1;
  const pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    const int null_fd = open("/dev/null", O_RDWR);
    dup2(input.empty() ? null_fd : in[0], 0);
    dup2(null_fd, 1);  // stderr stays: mkfs's complaint is the line Boot reports
    execv(args[0], args.data());
    _exit(127);
  }
  if (!input.empty()) {
    close(in[0]);
    if (write(in[1], input.data(), input.size()) != static_cast<ssize_t>(input.size())) {
      close(in[1]);
      kill(pid, SIGKILL);
    }
    close(in[1]);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// A new sparse file `path` of o.disk_bytes holding an empty ext4 file system whose root is root's
// inside: no journal and lazily initialised tables, so it costs the host only what is written.
void MakeFileSystem(const Options& o, const std::string& path) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0 || ftruncate(fd, o.disk_bytes) != 0) Fail("make " + path, errno);
  close(fd);
  const std::string owner = std::to_string(g_root) + ":" + std::to_string(g_root);
  if (RunHostProgram({o.mkfs, "-q", "-F", "-m", "0", "-O", "^has_journal", "-E",
                      "lazy_itable_init=1,root_owner=" + owner, path}) != 0) {
    unlink(path.c_str());
    Fail("mkfs.ext4 " + path, EIO);
  }
}

// Copies `from` into a new file `to` of the same size, its holes left holes (a few MiB of an
// empty file system's metadata, not the disk's size).
void CopySparse(const std::string& from, const std::string& to) {
  const int in = open(from.c_str(), O_RDONLY | O_CLOEXEC);
  const int out = open(to.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  struct stat st {};
  if (in < 0 || out < 0 || fstat(in, &st) != 0 || ftruncate(out, st.st_size) != 0) {
    Fail("copy " + from + " to " + to, errno);
  }
  off_t data = 0;
  while ((data = lseek(in, data, SEEK_DATA)) >= 0) {
    const off_t hole = lseek(in, data, SEEK_HOLE);
    if (hole < 0) Fail("copy " + from, errno);
    off_t at_in = data;
    off_t at_out = data;
    while (at_in < hole) {
      const ssize_t n = copy_file_range(in, &at_in, out, &at_out, hole - at_in, 0);
      if (n <= 0) Fail("copy " + from + " to " + to, n == 0 ? EIO : errno);
    }
    data = hole;
  }
  if (errno != ENXIO) Fail("copy " + from, errno);  // ENXIO: no data past `data`
  close(in);
  close(out);
}

// The worker's boot disk: <dir>/disk.img, a sparse file of o.disk_bytes holding an ext4 file
// system, mounted at <dir>/disk in the init's mount namespace through a loop device that detaches
// itself when that namespace goes (LO_FLAGS_AUTOCLEAR), kill -9 of everything included. A new
// disk is a sparse copy of an empty one made once per size and id range in the base folder
// (mkfs costs a boot tens of milliseconds; the copy, a few). Returns the mount point.
// `helper_pid` (unique among live workers: the init's own PID is 1) names its temporary files.
std::string MountDisk(const Options& o, pid_t helper_pid) {
  const std::string image = o.dir + "/disk.img";
  const std::string mount_point = o.dir + "/disk";
  if (access(image.c_str(), F_OK) != 0) {
    const std::string empty =
        o.base + "/disk-" + std::to_string(o.disk_bytes) + "-" + std::to_string(g_root) + ".img";
    if (access(empty.c_str(), F_OK) != 0) {
      // Workers booting at once may each make one: the last rename wins, any is right.
      const std::string made = empty + ".new-" + std::to_string(helper_pid);
      MakeFileSystem(o, made);
      if (rename(made.c_str(), empty.c_str()) != 0) Fail("rename " + made, errno);
    }
    const std::string fresh = image + ".new";
    CopySparse(empty, fresh);
    if (rename(fresh.c_str(), image.c_str()) != 0) Fail("rename " + fresh, errno);
  }
  const int image_fd = open(image.c_str(), O_RDWR | O_CLOEXEC);
  if (image_fd < 0) Fail("open " + image, errno);
  const int control = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
  if (control < 0) Fail("open /dev/loop-control", errno);
  int loop_fd = -1;
  std::string device;
  for (int tries = 0; tries < 64 && loop_fd < 0; ++tries) {
    const int n = ioctl(control, LOOP_CTL_GET_FREE);
    if (n < 0) Fail("find a free loop device", errno);
    device = "/dev/loop" + std::to_string(n);
    const int fd = open(device.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) Fail("open " + device, errno);
    loop_config config{};
    config.fd = static_cast<uint32_t>(image_fd);
    config.info.lo_flags = LO_FLAGS_AUTOCLEAR;
    if (ioctl(fd, LOOP_CONFIGURE, &config) == 0) {
      loop_fd = fd;
    } else {
      const int err = errno;
      close(fd);
      if (err != EBUSY) Fail("attach " + image + " to " + device, err);  // EBUSY: taken meanwhile
    }
  }
  close(control);
  close(image_fd);
  if (loop_fd < 0) Fail("attach " + image + ": every free loop device was taken", EBUSY);
  MakeDirs(mount_point, 0755);
  Mount(device.c_str(), mount_point, "ext4", MS_NODEV, "noinit_itable", "mount the boot disk");
  close(loop_fd);  // the mount holds the device now; it detaches when the mount goes
  return mount_point;
}

// Runs iproute2's ip with `args`; fails the step when it does.
void Ip(const Options& o, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {o.ip};
  argv.insert(argv.end(), args.begin(), args.end());
  if (RunHostProgram(argv) != 0) {
    std::string line = "ip";
    for (const std::string& a : args) line += " " + a;
    Fail(line, EIO);
  }
}

void WriteSysctl(const std::string& path, const std::string& value) {
  const int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0 || write(fd, value.data(), value.size()) != static_cast<ssize_t>(value.size())) {
    Fail("write " + path, errno);
  }
  close(fd);
}

// The worker's own network namespace (this process is in it, still host root): lo, and eth0 on
// the slice's private network (a veth whose peer joins the bridge of the `net` process's
// namespace), with the metadata server's address 169.254.169.254 reached through it (it lives in
// the slice's namespace, where tpuemud listens: nothing of the worker's own ports is taken).
// Nothing in the host's namespace: no interface, route or NAT reaches it.
void SetUpNetwork(const Options& o, pid_t helper_pid) {
  if (o.network <= 0) {
    Ip(o, {"link", "set", "lo", "up"});
  } else {
    const std::string peer = "v" + std::to_string(helper_pid);  // unique among live workers
    // A path, not a PID: ip runs in the worker's PID namespace, where that PID means nothing;
    // /proc is still the host's here.
    const std::string slice_ns = "/proc/" + std::to_string(o.network) + "/ns/net";
    // One ip for the worker's side (each process costs a boot milliseconds).
    const std::string batch =
        "link set lo up\n"
        "link add eth0 type veth peer name " +
        peer + " netns " + slice_ns +
        "\n"
        "addr add " +
        o.address +
        " dev eth0\n"
        "link set eth0 up\n"
        "route add 169.254.169.254/32 dev eth0\n";
    if (RunHostProgram({o.ip, "-batch", "-"}, batch) != 0)
      Fail("ip -batch (eth0 of " + peer + ")", EIO);
    const int own = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
    const int slice = open(slice_ns.c_str(), O_RDONLY | O_CLOEXEC);
    if (own < 0 || slice < 0) Fail("open the slice's network namespace", errno);
    if (setns(slice, CLONE_NEWNET) != 0) Fail("join the slice's network namespace", errno);
    Ip(o, {"link", "set", peer, "master", "br0", "up"});
    if (setns(own, CLONE_NEWNET) != 0) Fail("return to the worker's network namespace", errno);
    close(own);
    close(slice);
  }
  // As on a VM, root inside may serve port 80 (it has no capability in this namespace), and ping.
  WriteSysctl("/proc/sys/net/ipv4/ip_unprivileged_port_start", "0");
  WriteSysctl("/proc/sys/net/ipv4/ping_group_range", "0 2147483647");
}

// `net` mode: holds a slice's private network (a network namespace with bridge br0, which has the
// metadata server's address 169.254.169.254 and routes the slice's subnet back to the workers)
// for as long as the lifeline is open; the namespace, its bridge and the workers' veth peers go
// with it.
[[noreturn]] void Net(const Options& o) {
  g_mode = "tpuemu-sandbox net";
  CloseFdsExcept({o.lifeline_fd});
  if (o.ip.empty()) Usage("--ip");
  if (o.address.empty()) Usage("--subnet");
  if (unshare(CLONE_NEWNET) != 0) Fail("unshare", errno);
  Ip(o, {"link", "set", "lo", "up"});
  Ip(o, {"link", "add", "br0", "type", "bridge"});
  Ip(o, {"link", "set", "br0", "up"});
  Ip(o, {"addr", "add", "169.254.169.254/32", "dev", "br0"});
  Ip(o, {"route", "add", o.address, "dev", "br0"});
  ReportReady(getpid());
  for (;;) {
    pollfd p{o.lifeline_fd, POLLIN, 0};
    if (poll(&p, 1, -1) < 0 && errno != EINTR) break;
    char buf[64];
    const ssize_t got = read(o.lifeline_fd, buf, sizeof(buf));
    if (got == 0 || (got < 0 && errno != EINTR && errno != EAGAIN)) break;  // owner gone
  }
  _exit(0);
}

// Seccomp, on top of the user namespace: what the kernel still allows any user (the kernel log,
// where kernel.dmesg_restrict is 0) is refused inside. Installed while still root on the host
// (seccomp without no_new_privs needs CAP_SYS_ADMIN), inherited by everything inside.
void RestrictSyscalls() {
#if defined(__x86_64__)
  constexpr uint32_t kArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
  constexpr uint32_t kArch = AUDIT_ARCH_AARCH64;
#else
  constexpr uint32_t kArch = 0;
#endif
  if (kArch == 0) return;
  sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kArch, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),  // another ABI (i386, x32): none
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_syslog, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  sock_fprog prog{static_cast<unsigned short>(sizeof(filter) / sizeof(filter[0])), filter};
  if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) Fail("seccomp", errno);
}

// Joins the worker's user namespace as its root: from here on this process is g_root on the
// host, with capabilities over nothing but that namespace (which owns no other namespace).
void BecomeWorkerRoot(int userns_fd) {
  RestrictSyscalls();
  if (setns(userns_fd, CLONE_NEWUSER) != 0) Fail("join the user namespace", errno);
  close(userns_fd);
  if (setgroups(0, nullptr) != 0 || setresgid(0, 0, 0) != 0 || setresuid(0, 0, 0) != 0) {
    Fail("become root of the user namespace", errno);
  }
}

// Files a worker made under another id range (or before workers had user namespaces: range 0)
// are moved to this one, so that a restart that claimed another range still shows them as theirs.
uid_t g_shift_from = 0;
uid_t g_shift_count = 0;
int ShiftOne(const char* path, const struct stat* st, int, struct FTW*) {
  auto moved = [](uid_t id) {
    return id >= g_shift_from && id - g_shift_from < g_shift_count ? id - g_shift_from + g_root
                                                                   : id;
  };
  const uid_t uid = moved(st->st_uid);
  const gid_t gid = moved(st->st_gid);
  if (uid == st->st_uid && gid == st->st_gid) return 0;
  if (lchown(path, uid, gid) != 0) Fail(std::string("chown ") + path, errno);
  // chown clears set-user-ID and set-group-ID: give them back.
  if (!S_ISLNK(st->st_mode) && (st->st_mode & 06000) != 0) chmod(path, st->st_mode & 07777);
  return 0;
}

void ShiftIds(const Options& o) {
  const std::string& fs = g_fs;
  const std::string marker = fs + "/.ids";
  const std::string want = std::to_string(g_root) + "\n";
  struct stat st {};
  if (lstat(fs.c_str(), &st) == 0) {
    char have[32] = {0};
    const int fd = open(marker.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd >= 0) {
      if (read(fd, have, sizeof(have) - 1) < 0) have[0] = '\0';
      close(fd);
    }
    if (want == have) return;
    g_shift_from = static_cast<uid_t>(strtoul(have, nullptr, 10));
    g_shift_count = o.id_count;
    if (nftw(fs.c_str(), ShiftOne, 32, FTW_PHYS | FTW_MOUNT) != 0)
      Fail("shift ids of " + fs, errno);
  } else {
    MakeDirs(fs, 0755);
  }
  const int fd = open(marker.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0 || write(fd, want.data(), want.size()) != static_cast<ssize_t>(want.size())) {
    Fail("write " + marker, errno);
  }
  close(fd);
}

[[noreturn]] void InitMain(const Options& o, int ready_fd, int alive_fd, int userns_fd,
                           pid_t helper_pid) {
  g_mode = "tpuemu-sandbox init";
  DieWithParent(alive_fd);
  setsid();
  if (unshare(CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWNET) != 0) {
    Fail("unshare", errno);
  }
  SetUpNetwork(o, helper_pid);
  Mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr, "make / private");
  const std::string root = o.dir + "/root";
  std::string disk;
  g_fs = o.dir + "/fs";
  if (o.disk_bytes > 0) {
    disk = MountDisk(o, helper_pid);
    g_fs = disk + "/fs";
  }
  ShiftIds(o);
  BuildRoot(o, root, disk, userns_fd);
  if (sethostname(o.hostname.data(), o.hostname.size()) != 0) Fail("sethostname", errno);
  if (chdir(root.c_str()) != 0) Fail("chdir " + root, errno);
  if (mkdir(".oldroot", 0700) != 0 && errno != EEXIST) Fail("mkdir .oldroot", errno);
  if (syscall(SYS_pivot_root, ".", ".oldroot") != 0) Fail("pivot_root", errno);
  if (chdir("/") != 0) Fail("chdir /", errno);
  // Binds after the pivot: inside paths resolve in the worker's tree, never the host's.
  for (const BindArg& b : o.binds) {
    const std::string source = "/.oldroot" + b.host;
    struct stat st {};
    if (stat(source.c_str(), &st) != 0) Fail("bind " + b.host, errno);
    MakeMountPoint(source, b.inside);
    const uint64_t attrs =
        MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | (b.read_only ? MOUNT_ATTR_RDONLY : 0);
    AttachIdmapped(source, b.inside, userns_fd, attrs);
  }
  if (umount2("/.oldroot", MNT_DETACH) != 0) Fail("detach the old root", errno);
  rmdir("/.oldroot");
  BecomeWorkerRoot(userns_fd);
  const int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null_fd < 0) Fail("open /dev/null", errno);
  dup2(null_fd, 0);
  dup2(null_fd, 1);
  dup2(null_fd, 2);
  close(null_fd);
  if (write(ready_fd, "k", 1) != 1) _exit(1);
  close(ready_fd);
  InitLoop();
}

int PidfdOpen(pid_t pid) { return static_cast<int>(syscall(SYS_pidfd_open, pid, 0)); }

int ExitCode(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

[[noreturn]] void Boot(const Options& o) {
  g_mode = "tpuemu-sandbox boot";
  CloseFdsExcept({o.lifeline_fd});
  signal(SIGPIPE, SIG_IGN);
  if (o.dir.empty() || o.dir[0] != '/') Usage("--dir must be absolute");
  if (o.hostname.empty()) Usage("--hostname");
  if (o.id_first == 0 || o.id_count == 0) Usage("--ids FIRST COUNT");
  if (o.base.empty() || o.base[0] != '/') Usage("--base must be absolute");
  if (o.ip.empty()) Usage("--ip");
  g_root = o.id_first;
  const int userns_fd = tpuemu::sandbox::internal::MakeUserNamespace(o.id_first, o.id_count);
  if (userns_fd < 0) Fail("make the user namespace", errno);
  const std::vector<int> cgroup_fds = OpenCgroups(o.cgroups);
  const pid_t helper_pid = getpid();
  if (unshare(CLONE_NEWPID) != 0) Fail("unshare", errno);
  int ready[2];
  int alive[2];
  if (pipe2(ready, O_CLOEXEC) != 0 || pipe2(alive, O_CLOEXEC) != 0) Fail("pipe", errno);
  const pid_t init = fork();
  if (init < 0) Fail("fork", errno);
  if (init == 0) {
    close(ready[0]);
    close(alive[1]);
    if (o.lifeline_fd >= 0) close(o.lifeline_fd);
    JoinCgroups(o.cgroups, cgroup_fds);
    InitMain(o, ready[1], alive[0], userns_fd, helper_pid);
  }
  close(userns_fd);
  for (int fd : cgroup_fds) close(fd);
  close(ready[1]);
  close(alive[0]);
  char c = 0;
  ssize_t n;
  do {
    n = read(ready[0], &c, 1);
  } while (n < 0 && errno == EINTR);
  close(ready[0]);
  if (n != 1) {
    // The init said why on stderr.
    int status = 0;
    waitpid(init, &status, 0);
    _exit(1);
  }
  ReportReady(init);
  const int pidfd = PidfdOpen(init);
  for (;;) {
    pollfd fds[2] = {{o.lifeline_fd, POLLIN, 0}, {pidfd, POLLIN, 0}};
    const int r = poll(fds, 2, pidfd >= 0 ? -1 : 100);
    if (r < 0 && errno != EINTR) break;
    if (fds[0].revents != 0) {
      char buf[64];
      const ssize_t got = read(o.lifeline_fd, buf, sizeof(buf));
      if (got == 0 || (got < 0 && errno != EINTR && errno != EAGAIN)) break;  // owner gone
    }
    int status = 0;
    if (waitpid(init, &status, WNOHANG) == init) _exit(ExitCode(status));
  }
  kill(init, SIGKILL);
  int status = 0;
  waitpid(init, &status, 0);
  _exit(137);
}

pid_t g_child = 0;
void Forward(int sig) {
  if (g_child > 0) kill(g_child, sig == SIGALRM ? SIGKILL : sig);
}

[[noreturn]] void Enter(const Options& o) {
  g_mode = "tpuemu-sandbox enter";
  CloseFdsExcept({});
  if (o.pid <= 0) Usage("--pid");
  if (o.signo == 0 && o.argv.empty()) Usage("no command");
  const std::vector<int> cgroup_fds = OpenCgroups(o.cgroups);
  // Every descriptor first: once in the worker's mount namespace, /proc is the worker's.
  const std::string proc = "/proc/" + std::to_string(o.pid);
  const char* kinds[] = {"ipc", "uts", "net", "pid", "mnt"};
  int ns_fds[5];
  for (int i = 0; i < 5; ++i) {
    ns_fds[i] = open((proc + "/ns/" + kinds[i]).c_str(), O_RDONLY | O_CLOEXEC);
    if (ns_fds[i] < 0) Fail(proc + "/ns/" + kinds[i], errno);
  }
  // Joined by the child only: this process stays outside, where the worker cannot reach it.
  const int userns_fd = open((proc + "/ns/user").c_str(), O_RDONLY | O_CLOEXEC);
  if (userns_fd < 0) Fail(proc + "/ns/user", errno);
  const int root_fd = open((proc + "/root").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root_fd < 0) Fail(proc + "/root", errno);
  for (int i = 0; i < 5; ++i) {
    if (setns(ns_fds[i], 0) != 0) Fail(std::string("setns ") + kinds[i], errno);
    close(ns_fds[i]);
  }
  if (fchdir(root_fd) != 0 || chroot(".") != 0) Fail("chroot into the worker", errno);
  close(root_fd);
  int alive[2];
  if (pipe2(alive, O_CLOEXEC) != 0) Fail("pipe", errno);
  const pid_t child = fork();
  if (child < 0) Fail("fork", errno);
  if (child == 0) {
    close(alive[1]);
    DieWithParent(alive[0]);
    JoinCgroups(o.cgroups, cgroup_fds);
    BecomeWorkerRoot(userns_fd);
    if (o.signo != 0) {
      kill(-1, o.signo);  // everything in the namespace but its init and this process
      _exit(0);
    }
    setsid();
    if (chdir("/") != 0) Fail("chdir /", errno);
    std::vector<char*> argv;
    for (const std::string& a : o.argv) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execve(argv[0], argv.data(), environ);
    const int err = errno;
    dprintf(2, "%s: exec %s: %s\n", g_mode, argv[0], strerror(err));
    _exit(err == ENOENT ? 127 : 126);
  }
  close(alive[0]);
  close(userns_fd);
  g_child = child;
  struct sigaction sa {};
  sa.sa_handler = Forward;
  sa.sa_flags = SA_RESTART;
  for (int s : {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM}) {
    sigaction(s, &sa, nullptr);
  }
  int status = 0;
  while (waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) Fail("wait", errno);
  }
  _exit(ExitCode(status));
}

long ParseNumber(const char* s, const char* what) {
  char* end = nullptr;
  errno = 0;
  const long v = strtol(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0') Usage(what);
  return v;
}

Options Parse(int argc, char** argv, int first) {
  Options o;
  int i = first;
  auto next = [&](const char* what) -> const char* {
    if (i + 1 >= argc) Usage(what);
    return argv[++i];
  };
  for (; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--") {
      for (++i; i < argc; ++i) o.argv.push_back(argv[i]);
      break;
    } else if (a == "--dir") {
      o.dir = next("--dir");
    } else if (a == "--hostname") {
      o.hostname = next("--hostname");
    } else if (a == "--base") {
      o.base = next("--base");
    } else if (a == "--ip") {
      o.ip = next("--ip");
    } else if (a == "--subnet") {
      o.address = next("--subnet");
    } else if (a == "--network") {
      o.network = static_cast<pid_t>(ParseNumber(next("--network PID"), "--network PID"));
      o.address = next("--network ADDRESS/PREFIX");
    } else if (a == "--disk") {
      o.disk_bytes = ParseNumber(next("--disk BYTES"), "--disk BYTES");
      o.mkfs = next("--disk MKFS");
    } else if (a == "--ids") {
      o.id_first = static_cast<uid_t>(ParseNumber(next("--ids FIRST"), "--ids FIRST"));
      o.id_count = static_cast<uid_t>(ParseNumber(next("--ids COUNT"), "--ids COUNT"));
    } else if (a == "--lifeline-fd") {
      o.lifeline_fd = static_cast<int>(ParseNumber(next("--lifeline-fd"), "--lifeline-fd"));
    } else if (a == "--cgroup") {
      o.cgroups.push_back(next("--cgroup"));
    } else if (a == "--bind") {
      BindArg b;
      b.host = next("--bind HOST");
      b.inside = next("--bind INSIDE");
      const std::string mode = next("--bind ro|rw");
      if (b.host.empty() || b.host[0] != '/' || b.inside.empty() || b.inside[0] != '/' ||
          (mode != "ro" && mode != "rw")) {
        Usage("--bind HOST INSIDE ro|rw (absolute paths)");
      }
      b.read_only = mode == "ro";
      o.binds.push_back(b);
    } else if (a == "--tpu") {
      o.tpu.chips = static_cast<int>(ParseNumber(next("--tpu CHIPS"), "--tpu CHIPS"));
      o.tpu.device_id = next("--tpu DEVICE_ID");
      const std::string nodes = next("--tpu accel|vfio");
      if (nodes != "accel" && nodes != "vfio") Usage("--tpu CHIPS DEVICE_ID accel|vfio");
      o.tpu.vfio = nodes == "vfio";
    } else if (a == "--pid") {
      o.pid = static_cast<pid_t>(ParseNumber(next("--pid"), "--pid"));
    } else if (a == "--signal") {
      o.signo = static_cast<int>(ParseNumber(next("--signal"), "--signal"));
    } else {
      Usage(argv[i]);
    }
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && strcmp(argv[1], "boot") == 0) Boot(Parse(argc, argv, 2));
  if (argc >= 2 && strcmp(argv[1], "enter") == 0) Enter(Parse(argc, argv, 2));
  if (argc >= 2 && strcmp(argv[1], "net") == 0) Net(Parse(argc, argv, 2));
  dprintf(2,
          "usage: tpuemu-sandbox boot --dir DIR --hostname NAME --ids FIRST COUNT --base BASE "
          "--ip IP [--network PID ADDRESS/PREFIX] [--disk BYTES MKFS] [--lifeline-fd FD] "
          "[--cgroup DIR]... [--bind HOST INSIDE ro|rw]... [--tpu CHIPS DEVICE_ID accel|vfio]\n"
          "       tpuemu-sandbox net --ip IP --subnet CIDR --lifeline-fd FD\n"
          "       tpuemu-sandbox enter --pid INIT [--cgroup DIR]... [--signal N] -- PATH ARG...\n");
  return 2;
}
