// Commands bench_workers runs beside tpuemud (ssh, ssh-keygen): spawned with stdin from
// /dev/null and their output to a file, waited for with a limit, killed (SIGKILL) past it.
// Header-only.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace tpuemu::bench {

// Starts argv[0] (looked up in PATH) with stdout and stderr appended to `out_path` ("" =
// /dev/null); returns its pid, or -1 when fork failed.
inline pid_t SpawnCommand(const std::vector<std::string>& argv, const std::string& out_path) {
  // Everything that allocates happens before fork: the child only makes system calls.
  std::vector<std::string> copy = argv;
  std::vector<char*> args;
  for (std::string& a : copy) args.push_back(a.data());
  args.push_back(nullptr);
  const pid_t pid = fork();
  if (pid != 0) return pid;
  const int in = open("/dev/null", O_RDONLY);
  const int out = out_path.empty() ? open("/dev/null", O_WRONLY)
                                   : open(out_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
  if (in < 0 || out < 0) _exit(126);
  dup2(in, STDIN_FILENO);
  dup2(out, STDOUT_FILENO);
  dup2(out, STDERR_FILENO);
  execvp(args[0], args.data());
  _exit(127);
}

// Waits for `pid` at most `limit`: its exit code (128 + signal when a signal ended it), or -1
// when it ran past the limit (then it is killed and reaped) or `pid` is not a child.
inline int WaitExit(pid_t pid, std::chrono::milliseconds limit) {
  if (pid <= 0) return -1;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    int status = 0;
    const pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (r < 0) return -1;
    if (std::chrono::steady_clock::now() >= deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

// Whether `pid` has exited, without waiting: its exit code as WaitExit's, or -2 while it runs.
inline int TryWait(pid_t pid) {
  int status = 0;
  const pid_t r = waitpid(pid, &status, WNOHANG);
  if (r == 0) return -2;
  if (r != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

inline int RunCommand(const std::vector<std::string>& argv, const std::string& out_path,
                      std::chrono::milliseconds limit) {
  return WaitExit(SpawnCommand(argv, out_path), limit);
}

// ssh to user@ip:port with key `key`, non-interactive, no host key kept, running `command`.
inline std::vector<std::string> SshArgv(const std::string& key, const std::string& user,
                                        const std::string& ip, int port,
                                        const std::string& command) {
  return {"ssh",
          "-o",
          "StrictHostKeyChecking=no",
          "-o",
          "UserKnownHostsFile=/dev/null",
          "-o",
          "BatchMode=yes",
          "-o",
          "LogLevel=ERROR",
          "-o",
          "ConnectTimeout=10",
          "-i",
          key,
          "-p",
          std::to_string(port),
          user + "@" + ip,
          command};
}

}  // namespace tpuemu::bench
