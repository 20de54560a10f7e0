// ConsoleTerminal (console_terminal.h).
#include "service/workers/console_terminal.h"

#include <fcntl.h>
#include <pty.h>
#include <signal.h>
#include <spawn.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "service/common/clock.h"

extern char** environ;

namespace tpuemu::service {
namespace {

constexpr const char* kSsh = "/usr/bin/ssh";
constexpr const char* kSshKeygen = "/usr/bin/ssh-keygen";
constexpr const char* kSetsid = "/usr/bin/setsid";

// posix_spawn of argv with `env`, standard streams on `stdio_fd` (-1: /dev/null) and default
// signal handling; every other descriptor of tpuemud is close-on-exec.
Result<pid_t> Spawn(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                    int stdio_fd) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (stdio_fd >= 0) {
    for (int fd = 0; fd < 3; ++fd) posix_spawn_file_actions_adddup2(&actions, stdio_fd, fd);
  } else {
    for (int fd = 0; fd < 3; ++fd) {
      posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", O_RDWR, 0);
    }
  }
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  std::vector<char*> args, envp;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  for (const std::string& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  pid_t pid = 0;
  const int err = posix_spawn(&pid, args[0], &actions, &attr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (err != 0) return Status::Unavailable("cannot start " + argv[0] + ": " + strerror(err));
  return pid;
}

int Reap(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

std::string ConsoleUserName(const std::string& principal) {
  std::string name = principal.substr(0, principal.find('@'));
  for (char& c : name) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.' && c != '-') c = '_';
  }
  if (name.empty()) return "tpuemu";
  if (std::isdigit(static_cast<unsigned char>(name[0])) || name[0] == '-') name = "u" + name;
  return name.substr(0, 32);
}

Result<std::unique_ptr<ConsoleTerminal>> ConsoleTerminal::Open(WorkerManager& workers,
                                                               const Options& o) {
  for (const char* tool : {kSsh, kSshKeygen, kSetsid}) {
    if (access(tool, X_OK) != 0) {
      return Status::Unavailable(std::string(tool) + " is missing (Debian's openssh-client)");
    }
  }
  std::unique_ptr<ConsoleTerminal> t(new ConsoleTerminal());
  std::string pattern = (std::filesystem::temp_directory_path() / "tpuemu-console-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) {
    return Status::Unavailable("cannot make a key folder: " + std::string(strerror(errno)));
  }
  t->dir_ = pattern;
  const std::string key = t->dir_ + "/id_ed25519";
  Result<pid_t> keygen =
      Spawn({kSshKeygen, "-q", "-t", "ed25519", "-N", "", "-C", o.user, "-f", key}, {}, -1);
  if (!keygen.ok()) return keygen.status();
  if (Reap(*keygen) != 0) return Status::Unavailable("ssh-keygen failed");
  std::string public_key = ReadAll(key + ".pub");
  public_key = public_key.substr(0, public_key.find(" " + o.user));  // "type base64"
  const int64_t expire_ms =
      NowUnixMs() + std::chrono::duration_cast<std::chrono::milliseconds>(o.key_lifetime).count();
  Result<WorkerManager::ConsoleLogin> login =
      workers.AddConsoleKey(o.node_name, o.worker, o.user, public_key, expire_ms);
  if (!login.ok()) return login.status();
  const std::string host =
      login->port == 22 ? login->ip : "[" + login->ip + "]:" + std::to_string(login->port);
  std::ofstream(t->dir_ + "/known_hosts") << host << " " << login->host_key << "\n";

  winsize size{};
  size.ws_col = static_cast<unsigned short>(o.cols);
  size.ws_row = static_cast<unsigned short>(o.rows);
  int master = -1, slave = -1;
  if (openpty(&master, &slave, nullptr, nullptr, &size) != 0) {
    return Status::Unavailable("openpty: " + std::string(strerror(errno)));
  }
  fcntl(master, F_SETFD, FD_CLOEXEC);
  fcntl(slave, F_SETFD, FD_CLOEXEC);
  t->master_fd_ = master;
  // setsid -c: ssh leads a session whose controlling terminal is the pty, so a resize reaches
  // it as SIGWINCH and a hang-up as SIGHUP.
  Result<pid_t> ssh = Spawn(
      {kSetsid,
       "-w",
       "-c",
       kSsh,
       "-F",
       "/dev/null",
       "-t",
       "-i",
       key,
       "-o",
       "IdentitiesOnly=yes",
       "-o",
       "BatchMode=yes",
       "-o",
       "StrictHostKeyChecking=yes",
       "-o",
       "UserKnownHostsFile=" + t->dir_ + "/known_hosts",
       "-o",
       "SendEnv=LANG",
       "-o",
       "ServerAliveInterval=30",
       "-o",
       "LogLevel=ERROR",
       "-p",
       std::to_string(login->port),
       o.user + "@" + login->ip},
      {"TERM=xterm-256color", "LANG=C.UTF-8", "HOME=" + t->dir_, "PATH=/usr/bin:/bin"}, slave);
  close(slave);
  if (!ssh.ok()) return ssh.status();
  t->pid_ = *ssh;
  fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK);
  return t;
}

Status ConsoleTerminal::Resize(int cols, int rows) {
  if (cols < 1 || rows < 1 || cols > 1000 || rows > 1000) {
    return Status::InvalidArgument("terminal size must be 1..1000 columns and rows");
  }
  winsize size{};
  size.ws_col = static_cast<unsigned short>(cols);
  size.ws_row = static_cast<unsigned short>(rows);
  if (ioctl(master_fd_, TIOCSWINSZ, &size) != 0) {
    return Status::Internal("resize: " + std::string(strerror(errno)));
  }
  return Status::Ok();
}

int ConsoleTerminal::End() {
  if (ended_) return exit_status_;
  ended_ = true;
  if (pid_ > 0) {
    kill(pid_, SIGHUP);
    // ssh ends within milliseconds of its terminal hanging up; then no more than a second.
    for (int i = 0; i < 100; ++i) {
      int status = 0;
      const pid_t done = waitpid(pid_, &status, WNOHANG);
      if (done == pid_) {
        exit_status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        pid_ = 0;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      exit_status_ = Reap(pid_);
      pid_ = 0;
    }
  }
  if (master_fd_ >= 0) close(master_fd_);
  master_fd_ = -1;
  std::error_code ec;
  if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
  return exit_status_;
}

ConsoleTerminal::~ConsoleTerminal() { End(); }

}  // namespace tpuemu::service
