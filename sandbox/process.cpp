#include "sandbox/process.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <mutex>
#include <thread>

namespace tpuemu::sandbox::internal {

std::string ErrnoText(int err) {
  char buf[256];
  // GNU strerror_r returns the text (maybe not in buf).
  return strerror_r(err, buf, sizeof(buf));
}

int PidfdOpen(pid_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
#else
  (void)pid;
  errno = ENOSYS;
  return -1;
#endif
}

namespace {

// Owns the temporary high-numbered copies of the caller's descriptors and the spawn attributes.
struct SpawnState {
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  std::vector<int> copies;
  SpawnState() {
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attr);
  }
  ~SpawnState() {
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    for (int fd : copies) close(fd);
  }
};

}  // namespace

Result<pid_t> SpawnProcess(const std::string& path, const std::vector<std::string>& argv,
                           const std::vector<std::string>& env, const int (&stdio)[3],
                           const std::vector<std::pair<int, int>>& extra) {
  SpawnState s;
  // Copies above every target number first, so that no dup2 overwrites a source still needed and
  // none is a dup2 onto itself (which would keep FD_CLOEXEC).
  auto copy = [&](int fd) -> Result<int> {
    const int c = fcntl(fd, F_DUPFD_CLOEXEC, 10);
    if (c < 0) return Status::Internal("spawn " + path + ": dup: " + ErrnoText(errno));
    s.copies.push_back(c);
    return c;
  };
  for (int target = 0; target < 3; ++target) {
    if (stdio[target] < 0) {
      posix_spawn_file_actions_addopen(&s.actions, target, "/dev/null", O_RDWR, 0);
    } else {
      Result<int> c = copy(stdio[target]);
      if (!c.ok()) return c.status();
      posix_spawn_file_actions_adddup2(&s.actions, *c, target);
    }
  }
  for (const auto& [from, to] : extra) {
    Result<int> c = copy(from);
    if (!c.ok()) return c.status();
    posix_spawn_file_actions_adddup2(&s.actions, *c, to);
  }
  sigset_t none;
  sigset_t all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&s.attr, &none);
  posix_spawnattr_setsigdefault(&s.attr, &all);
  posix_spawnattr_setflags(&s.attr,
                           POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSID);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<char*> envp;
  for (const std::string& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  pid_t pid = 0;
  const int err = posix_spawn(&pid, path.c_str(), &s.actions, &s.attr, args.data(), envp.data());
  if (err != 0) return Status::Internal("spawn " + path + ": " + ErrnoText(err));
  return pid;
}

std::optional<int> WaitChild(pid_t pid, std::chrono::milliseconds timeout) {
  int status = 0;
  if (timeout.count() < 0) {
    while (waitpid(pid, &status, 0) < 0) {
      if (errno != EINTR) return -1;
    }
    return status;
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  const int pidfd = PidfdOpen(pid);
  for (;;) {
    const pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid || (r < 0 && errno != EINTR)) {
      if (pidfd >= 0) close(pidfd);
      return r == pid ? status : -1;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    if (pidfd >= 0) {
      pollfd p{pidfd, POLLIN, 0};
      poll(&p, 1, static_cast<int>(left.count()) + 1);
    } else {
      std::this_thread::sleep_for(std::min(left, std::chrono::milliseconds(5)));
    }
  }
  if (pidfd >= 0) close(pidfd);
  return std::nullopt;
}

std::string FindExecutable(const std::string& name) {
  if (name.empty()) return "";
  if (name.find('/') != std::string::npos) {
    return access(name.c_str(), X_OK) == 0 ? name : "";
  }
  const char* path = getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  dirs += ":/usr/sbin:/sbin";
  size_t pos = 0;
  while (pos <= dirs.size()) {
    size_t next = dirs.find(':', pos);
    if (next == std::string::npos) next = dirs.size();
    const std::string dir = dirs.substr(pos, next - pos);
    pos = next + 1;
    if (dir.empty() || dir[0] != '/') continue;
    const std::string candidate = dir + "/" + name;
    struct stat st {};
    if (stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
  }
  return "";
}

}  // namespace tpuemu::sandbox::internal

namespace tpuemu::sandbox::internal {

int LifelineReadEnd() {
  static std::mutex mu;
  static pid_t owner = 0;
  static int fds[2] = {-1, -1};
  std::lock_guard<std::mutex> lock(mu);
  if (owner != getpid()) {
    if (fds[0] >= 0) close(fds[0]);
    if (fds[1] >= 0) close(fds[1]);
    if (pipe2(fds, O_CLOEXEC) != 0) {
      fds[0] = fds[1] = -1;
      return -1;
    }
    owner = getpid();
  }
  return fds[0];  // the write end stays open, unwritten, until this process ends
}

Result<std::pair<pid_t, pid_t>> StartHelper(const std::string& helper,
                                            const std::vector<std::string>& argv,
                                            std::chrono::milliseconds timeout,
                                            const std::string& what) {
  const int lifeline = LifelineReadEnd();
  if (lifeline < 0) return Status::Internal(what + ": lifeline pipe: " + ErrnoText(errno));
  int err_pipe[2];
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    return Status::Internal(what + ": pipe: " + ErrnoText(errno));
  }
  const int stdio[3] = {-1, -1, err_pipe[1]};
  Result<pid_t> pid = SpawnProcess(
      helper, argv, {"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}, stdio,
      {{lifeline, 3}});
  close(err_pipe[1]);
  if (!pid.ok()) {
    close(err_pipe[0]);
    return Status::Internal(what + ": " + pid.status().message());
  }
  // Its stderr: "ready <pid>" or one line naming the step that failed, then EOF.
  std::string text;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  bool timed_out = false;
  for (;;) {
    if (text.find('\n') != std::string::npos && text.rfind("ready ", 0) == 0) break;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{err_pipe[0], POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) < 0 && errno != EINTR) break;
    char buf[512];
    const ssize_t n = read(err_pipe[0], buf, sizeof(buf));
    if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) break;
    if (n > 0 && text.size() < 4096) text.append(buf, static_cast<size_t>(n));
  }
  close(err_pipe[0]);
  if (text.rfind("ready ", 0) == 0 && text.find('\n') != std::string::npos) {
    return std::make_pair(*pid, static_cast<pid_t>(std::strtol(text.c_str() + 6, nullptr, 10)));
  }
  kill(*pid, SIGKILL);
  (void)WaitChild(*pid, std::chrono::milliseconds(-1));
  if (timed_out) {
    return Status::Unavailable(what + ": the helper did not report within " +
                               std::to_string(timeout.count()) + " ms");
  }
  std::string line = text.substr(0, text.find('\n'));
  if (line.empty()) line = "the helper exited without a word";
  return Status::Internal(what + ": " + line);
}

}  // namespace tpuemu::sandbox::internal
