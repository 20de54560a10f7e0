#include "sandbox/worker_box.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "sandbox/cgroup.h"
#include "sandbox/process.h"

namespace tpuemu::sandbox {

namespace {

using internal::ErrnoText;
using std::chrono::milliseconds;

constexpr const char* kDefaultPath =
    "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
constexpr milliseconds kBootTimeout{20000};
constexpr milliseconds kCgroupDrain{2000};
constexpr size_t kRunOutputLimit = 64 * 1024;

int ExitCode(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 255;
}

// Whether child `pid` has exited, without reaping it.
bool ChildExited(pid_t pid) {
  siginfo_t info{};
  if (waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0) {
    return errno == ECHILD;
  }
  return info.si_pid == pid;
}

int SendSignal(int pidfd, pid_t pid, int signo) {
#ifdef SYS_pidfd_send_signal
  if (pidfd >= 0) return static_cast<int>(syscall(SYS_pidfd_send_signal, pidfd, signo, nullptr, 0));
#endif
  (void)pidfd;
  return kill(pid, signo);
}

Status ValidateSpec(const BootSpec& spec) {
  if (spec.dir.empty() || spec.dir[0] != '/') {
    return Status::InvalidArgument("worker dir '" + spec.dir + "' must be an absolute path");
  }
  // Overlay mount options are separated by ',' and ':'.
  if (spec.dir.find_first_of(",:\n") != std::string::npos) {
    return Status::InvalidArgument("worker dir '" + spec.dir + "' may not hold ',' or ':'");
  }
  if (spec.hostname.empty() || spec.hostname.size() > 64) {
    return Status::InvalidArgument("worker hostname '" + spec.hostname + "' must be 1..64 bytes");
  }
  if (spec.cgroup_name.empty() || spec.cgroup_name.find('/') != std::string::npos ||
      spec.cgroup_name[0] == '.') {
    return Status::InvalidArgument("worker cgroup_name '" + spec.cgroup_name +
                                   "' must be one path component");
  }
  for (const Bind& b : spec.binds) {
    if (b.host_path.empty() || b.host_path[0] != '/' || b.inside_path.empty() ||
        b.inside_path[0] != '/') {
      return Status::InvalidArgument("bind '" + b.host_path + "' -> '" + b.inside_path +
                                     "': both paths must be absolute");
    }
  }
  return Status::Ok();
}

Status MakeDirs(const std::string& path, mode_t mode) {
  for (size_t pos = 0; pos <= path.size();) {
    size_t next = path.find('/', pos);
    if (next == std::string::npos) next = path.size();
    const std::string cur = path.substr(0, next);
    pos = next + 1;
    if (cur.empty()) continue;
    if (mkdir(cur.c_str(), mode) != 0 && errno != EEXIST) {
      return Status::Internal("mkdir " + cur + ": " + ErrnoText(errno));
    }
  }
  return Status::Ok();
}

// Writes to a pipe without this process dying of SIGPIPE when the reader is gone.
ssize_t WriteNoSigpipe(int fd, const char* data, size_t size) {
  sigset_t pipe_set;
  sigset_t old;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
  const ssize_t n = write(fd, data, size);
  const int err = errno;
  if (n < 0 && err == EPIPE) {
    timespec zero{0, 0};
    sigtimedwait(&pipe_set, nullptr, &zero);  // the SIGPIPE this thread just raised
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  errno = err;
  return n;
}

thread_local int wipe_errno = 0;
thread_local char wipe_path[PATH_MAX];

int WipeOne(const char* path, const struct stat*, int type, struct FTW*) {
  const int r = (type == FTW_DP || type == FTW_D) ? rmdir(path) : unlink(path);
  if (r != 0 && errno != ENOENT && wipe_errno == 0) {
    wipe_errno = errno;
    snprintf(wipe_path, sizeof(wipe_path), "%s", path);
  }
  return 0;
}

}  // namespace

Result<std::unique_ptr<WorkerBox>> WorkerBox::Boot(const Support& support, const BootSpec& spec) {
  if (!support.ok) {
    return Status::FailedPrecondition("worker sandboxes are off: " + support.reason);
  }
  TPUEMU_RETURN_IF_ERROR(ValidateSpec(spec));
  TPUEMU_RETURN_IF_ERROR(MakeDirs(spec.dir, 0755));
  if (spec.host_free_floor_bytes > 0) {
    struct statvfs fs {};
    if (statvfs(spec.dir.c_str(), &fs) == 0) {
      const int64_t free_bytes = static_cast<int64_t>(fs.f_bavail) * fs.f_frsize;
      if (free_bytes < spec.host_free_floor_bytes) {
        return Status::ResourceExhausted(
            "boot worker " + spec.hostname + ": the host's file system under " + spec.dir +
            " has " + std::to_string(free_bytes >> 20) + " MiB free, below the floor of " +
            std::to_string(spec.host_free_floor_bytes >> 20) + " MiB kept for tpuemud's data");
      }
    }
  }
  std::unique_ptr<WorkerBox> box(new WorkerBox());
  box->support_ = support;
  box->spec_ = spec;
  char real[PATH_MAX];
  if (realpath(spec.dir.c_str(), real) != nullptr) box->spec_.dir = real;
  const std::string what = "boot worker " + spec.hostname;

  // The cgroups, made here so that the same code removes them.
  internal::CgroupLayout layout = internal::DetectCgroups();
  if (!support.memory_limits) layout.memory_parent.clear();
  if (!support.pids_limits) layout.pids_parent.clear();
  std::vector<std::string> parents;
  for (const std::string& p : {layout.memory_parent, layout.pids_parent}) {
    if (!p.empty() && (parents.empty() || parents[0] != p)) parents.push_back(p);
  }
  for (const std::string& parent : parents) {
    // Named by this process's id range, so that a later tpuemud knows whose it was.
    Result<std::string> dir = internal::MakeCgroup(
        layout, parent, "r" + std::to_string(support.id_first) + "-" + spec.cgroup_name,
        spec.memory_limit_bytes, spec.pids_limit);
    if (!dir.ok()) {
      for (const std::string& made : box->Cgroups())
        (void)internal::RemoveCgroup(made, kCgroupDrain);
      return Status::Unavailable(what + ": " + dir.status().message());
    }
    if (parent == layout.memory_parent) box->memory_cgroup_ = *dir;
    if (parent == layout.pids_parent) box->pids_cgroup_ = *dir;
  }

  std::vector<std::string> args = {support.helper,
                                   "boot",
                                   "--dir",
                                   box->spec_.dir,
                                   "--hostname",
                                   spec.hostname,
                                   "--ids",
                                   std::to_string(support.id_first),
                                   std::to_string(support.id_count),
                                   "--base",
                                   support.base_dir,
                                   "--ip",
                                   support.ip,
                                   "--lifeline-fd",
                                   "3"};
  if (spec.network_pid > 0) {
    args.insert(args.end(), {"--network", std::to_string(spec.network_pid), spec.address});
  }
  if (spec.disk_bytes > 0 && support.disks) {
    args.insert(args.end(), {"--disk", std::to_string(spec.disk_bytes), support.mkfs});
  }
  for (const std::string& cg : box->Cgroups()) {
    args.push_back("--cgroup");
    args.push_back(cg);
  }
  for (const Bind& b : spec.binds) {
    args.insert(args.end(), {"--bind", b.host_path, b.inside_path, b.read_only ? "ro" : "rw"});
  }
  if (spec.tpu.chips > 0) {
    args.insert(args.end(), {"--tpu", std::to_string(spec.tpu.chips), spec.tpu.device_id,
                             spec.tpu.vfio ? "vfio" : "accel"});
  }
  Result<std::pair<pid_t, pid_t>> started =
      internal::StartHelper(support.helper, args, kBootTimeout, what);
  if (!started.ok()) {
    for (const std::string& cg : box->Cgroups()) (void)internal::RemoveCgroup(cg, kCgroupDrain);
    return started.status();
  }
  std::lock_guard<std::mutex> lock(box->mu_);
  box->helper_pid_ = started->first;
  box->init_pid_ = started->second;
  box->init_pidfd_ = internal::PidfdOpen(started->second);
  return box;
}

WorkerBox::~WorkerBox() { Kill(); }

std::vector<std::string> WorkerBox::Cgroups() const {
  std::vector<std::string> out;
  if (!memory_cgroup_.empty()) out.push_back(memory_cgroup_);
  if (!pids_cgroup_.empty() && pids_cgroup_ != memory_cgroup_) out.push_back(pids_cgroup_);
  return out;
}

bool WorkerBox::AliveLocked() const {
  if (helper_pid_ == 0 || ChildExited(helper_pid_)) return false;
  if (init_pidfd_ >= 0) {
    pollfd p{init_pidfd_, POLLIN, 0};
    return poll(&p, 1, 0) == 0;
  }
  return kill(init_pid_, 0) == 0;
}

pid_t WorkerBox::init_pid() const {
  std::lock_guard<std::mutex> lock(mu_);
  return AliveLocked() ? init_pid_ : 0;
}

bool WorkerBox::Alive() const {
  std::lock_guard<std::mutex> lock(mu_);
  return AliveLocked();
}

void WorkerBox::Stop(milliseconds grace) { End(SIGTERM, grace); }

void WorkerBox::Kill() { End(SIGKILL, milliseconds(0)); }

void WorkerBox::End(int signo, milliseconds grace) {
  std::lock_guard<std::mutex> end_lock(end_mu_);
  pid_t helper = 0;
  pid_t init = 0;
  int pidfd = -1;
  {
    std::lock_guard<std::mutex> lock(mu_);
    helper = helper_pid_;
    init = init_pid_;
    pidfd = init_pidfd_;
  }
  if (helper != 0) {
    // The helper reaps the init: while the helper is unreaped, a signal through the pidfd (or the
    // pid, without pidfds) reaches the init or nothing.
    if (!ChildExited(helper)) SendSignal(pidfd, init, signo);
    if (signo == SIGKILL || !internal::WaitChild(helper, grace).has_value()) {
      if (!ChildExited(helper)) SendSignal(pidfd, init, SIGKILL);
      (void)internal::WaitChild(helper, milliseconds(-1));
    }
    std::lock_guard<std::mutex> lock(mu_);
    helper_pid_ = 0;
    init_pid_ = 0;
    if (init_pidfd_ >= 0) close(init_pidfd_);
    init_pidfd_ = -1;
  }
  // Once: a later End (the destructor's) must not touch a new worker's cgroups of the same name.
  std::vector<std::string> cgroups;
  {
    std::lock_guard<std::mutex> lock(mu_);
    cgroups = Cgroups();
    memory_cgroup_.clear();
    pids_cgroup_.clear();
  }
  for (const std::string& cg : cgroups) (void)internal::RemoveCgroup(cg, kCgroupDrain);
}

Status WorkerBox::SignalAll(int signo) {
  std::vector<std::string> args = {support_.helper,      "enter", "--pid", "", "--signal",
                                   std::to_string(signo)};
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!AliveLocked()) return Status::Ok();
    args[3] = std::to_string(init_pid_);
  }
  const int stdio[3] = {-1, -1, -1};
  Result<pid_t> pid = internal::SpawnProcess(support_.helper, args, {kDefaultPath}, stdio);
  if (!pid.ok()) return pid.status();
  std::optional<int> status = internal::WaitChild(*pid, milliseconds(10000));
  if (!status.has_value()) {
    kill(*pid, SIGKILL);
    (void)internal::WaitChild(*pid, milliseconds(-1));
    return Status::Unavailable("signal worker " + spec_.hostname + ": timed out");
  }
  if (*status != 0 && Alive()) {
    return Status::Internal("signal worker " + spec_.hostname + ": the helper exited with " +
                            std::to_string(ExitCode(*status)));
  }
  return Status::Ok();
}

Result<pid_t> WorkerBox::Spawn(const std::vector<std::string>& argv,
                               const std::vector<std::string>& env, const SpawnIo& io) const {
  if (argv.empty() || argv[0].empty() || argv[0][0] != '/') {
    return Status::InvalidArgument("spawn in worker " + spec_.hostname +
                                   ": argv[0] must be an absolute path");
  }
  std::vector<std::string> args = {support_.helper, "enter", "--pid", ""};
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!AliveLocked()) {
      return Status::FailedPrecondition("worker " + spec_.hostname + " is not running");
    }
    args[3] = std::to_string(init_pid_);
    for (const std::string& cg : Cgroups()) {
      args.push_back("--cgroup");
      args.push_back(cg);
    }
  }
  args.push_back("--");
  args.insert(args.end(), argv.begin(), argv.end());
  std::vector<std::string> environment = env;
  bool has_path = false;
  for (const std::string& e : env) has_path = has_path || e.rfind("PATH=", 0) == 0;
  if (!has_path) environment.push_back(kDefaultPath);
  const int stdio[3] = {io.stdin_fd, io.stdout_fd, io.stderr_fd};
  return internal::SpawnProcess(support_.helper, args, environment, stdio);
}

Result<std::pair<int, std::string>> WorkerBox::Run(const std::vector<std::string>& argv,
                                                   const std::string& stdin_data,
                                                   milliseconds deadline) const {
  int in[2];
  int out[2];
  if (pipe2(in, O_CLOEXEC) != 0) return Status::Internal("run: pipe: " + ErrnoText(errno));
  if (pipe2(out, O_CLOEXEC) != 0) {
    close(in[0]);
    close(in[1]);
    return Status::Internal("run: pipe: " + ErrnoText(errno));
  }
  SpawnIo io{in[0], out[1], out[1]};
  Result<pid_t> pid = Spawn(argv, {}, io);
  close(in[0]);
  close(out[1]);
  if (!pid.ok()) {
    close(in[1]);
    close(out[0]);
    return pid.status();
  }
  fcntl(in[1], F_SETFL, O_NONBLOCK);
  fcntl(out[0], F_SETFL, O_NONBLOCK);
  int in_fd = in[1];
  int out_fd = out[0];
  if (stdin_data.empty()) {
    close(in_fd);
    in_fd = -1;
  }
  const int pidfd = internal::PidfdOpen(*pid);
  size_t written = 0;
  std::string output;
  bool exited = false;
  auto drain = [&]() {
    char buf[16384];
    for (;;) {
      const ssize_t n = read(out_fd, buf, sizeof(buf));
      if (n > 0) {
        output.append(buf, std::min(static_cast<size_t>(n),
                                    kRunOutputLimit - std::min(kRunOutputLimit, output.size())));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n == 0) {
        close(out_fd);
        out_fd = -1;
      }
      return;
    }
  };
  const auto end = std::chrono::steady_clock::now() + deadline;
  bool timed_out = false;
  while (!exited) {
    const auto left =
        std::chrono::duration_cast<milliseconds>(end - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd fds[3];
    int n = 0;
    if (out_fd >= 0) fds[n++] = {out_fd, POLLIN, 0};
    if (in_fd >= 0) fds[n++] = {in_fd, POLLOUT, 0};
    if (pidfd >= 0) fds[n++] = {pidfd, POLLIN, 0};
    const int wait_ms = pidfd >= 0 ? static_cast<int>(left.count()) + 1 : 10;
    if (poll(fds, n, std::min(wait_ms, static_cast<int>(left.count()) + 1)) < 0 && errno != EINTR) {
      break;
    }
    if (out_fd >= 0) drain();
    if (in_fd >= 0) {
      const ssize_t w =
          WriteNoSigpipe(in_fd, stdin_data.data() + written, stdin_data.size() - written);
      if (w > 0) written += static_cast<size_t>(w);
      if ((w < 0 && errno != EAGAIN && errno != EINTR) || written == stdin_data.size()) {
        close(in_fd);
        in_fd = -1;
      }
    }
    // The command's output is all in the pipe once the enter process has reaped it; anything a
    // background child keeps writing is not waited for.
    if (ChildExited(*pid)) {
      exited = true;
      if (out_fd >= 0) drain();
    }
  }
  if (in_fd >= 0) close(in_fd);
  if (out_fd >= 0) close(out_fd);
  if (pidfd >= 0) close(pidfd);
  std::optional<int> reaped;
  if (timed_out) {
    // The command first (see Spawn), the enter process only if it does not follow.
    kill(*pid, SIGALRM);
    reaped = internal::WaitChild(*pid, milliseconds(2000));
    if (!reaped.has_value()) kill(*pid, SIGKILL);
  }
  if (!reaped.has_value()) reaped = internal::WaitChild(*pid, milliseconds(-1));
  const int status = reaped.value_or(-1);
  if (timed_out) {
    return Status::DeadlineExceeded("run " + argv[0] + " in worker " + spec_.hostname +
                                    ": still running after " + std::to_string(deadline.count()) +
                                    " ms; killed");
  }
  return std::make_pair(ExitCode(status), std::move(output));
}

int64_t WorkerBox::MemoryBytes() const {
  std::string dir;
  {
    std::lock_guard<std::mutex> lock(mu_);
    dir = memory_cgroup_;
  }
  if (dir.empty()) return -1;
  const int64_t v2 = internal::ReadCgroupNumber(dir + "/memory.current");
  return v2 >= 0 ? v2 : internal::ReadCgroupNumber(dir + "/memory.usage_in_bytes");
}

int64_t WorkerBox::ProcessCount() const {
  std::string dir;
  {
    std::lock_guard<std::mutex> lock(mu_);
    dir = pids_cgroup_;
  }
  if (dir.empty()) return -1;
  return internal::ReadCgroupNumber(dir + "/pids.current");
}

Status Wipe(const std::string& dir) {
  struct stat st {};
  if (lstat(dir.c_str(), &st) != 0) {
    if (errno == ENOENT) return Status::Ok();
    return Status::Internal("wipe " + dir + ": " + ErrnoText(errno));
  }
  wipe_errno = 0;
  // FTW_PHYS: symlinks are removed, never followed; FTW_MOUNT: never into another file system.
  if (nftw(dir.c_str(), WipeOne, 32, FTW_PHYS | FTW_DEPTH | FTW_MOUNT) != 0) {
    return Status::Internal("wipe " + dir + ": " + ErrnoText(errno));
  }
  if (wipe_errno != 0) {
    return Status::Internal("wipe " + dir + ": remove " + wipe_path + ": " + ErrnoText(wipe_errno));
  }
  return Status::Ok();
}

Result<std::string> EnsureHostKey(const Support& support, const std::string& path) {
  const std::string pub = path + ".pub";
  if (access(path.c_str(), R_OK) != 0 || access(pub.c_str(), R_OK) != 0) {
    if (support.ssh_keygen.empty()) return Status::FailedPrecondition("no ssh-keygen");
    unlink(path.c_str());
    unlink(pub.c_str());
    const size_t slash = path.rfind('/');
    if (slash != std::string::npos && slash > 0)
      TPUEMU_RETURN_IF_ERROR(MakeDirs(path.substr(0, slash), 0755));
    int out[2];
    if (pipe2(out, O_CLOEXEC) != 0) return Status::Internal("host key: pipe: " + ErrnoText(errno));
    const int stdio[3] = {-1, out[1], out[1]};
    Result<pid_t> pid = internal::SpawnProcess(
        support.ssh_keygen,
        {support.ssh_keygen, "-q", "-t", "ed25519", "-N", "", "-C", "", "-f", path}, {kDefaultPath},
        stdio);
    close(out[1]);
    std::string text;
    if (pid.ok()) {
      char buf[1024];
      ssize_t n;
      while ((n = read(out[0], buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR)) {
        if (n > 0 && text.size() < 4096) text.append(buf, static_cast<size_t>(n));
      }
    }
    close(out[0]);
    if (!pid.ok()) return pid.status();
    const int status = internal::WaitChild(*pid, milliseconds(-1)).value_or(-1);
    if (status != 0) {
      return Status::Internal("ssh-keygen -f " + path + " exited with " +
                              std::to_string(ExitCode(status)) + ": " +
                              text.substr(0, text.find('\n')));
    }
  }
  std::ifstream in(pub);
  std::string type;
  std::string key;
  if (!(in >> type >> key)) return Status::Internal("host key " + pub + ": unreadable");
  return type + " " + key;
}

}  // namespace tpuemu::sandbox
