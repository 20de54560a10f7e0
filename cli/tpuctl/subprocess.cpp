#include "cli/tpuctl/subprocess.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace tpuemu::cli {

int RunProcess(const std::vector<std::string>& argv, bool inherit_stdin, int stdout_fd) {
  if (argv.empty()) return 127;
  // Everything the child touches is made before fork: after it only async-signal-safe calls.
  std::vector<std::string> args = argv;
  std::vector<char*> cargv;
  for (std::string& a : args) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  const std::string failed = "tpuctl: cannot run " + argv[0] + ": ";
  pid_t pid = fork();
  if (pid < 0) return 127;
  if (pid == 0) {
    if (!inherit_stdin) {
      int devnull = open("/dev/null", O_RDONLY);
      if (devnull >= 0) dup2(devnull, STDIN_FILENO);
    }
    if (stdout_fd != STDOUT_FILENO) dup2(stdout_fd, STDOUT_FILENO);
    execvp(cargv[0], cargv.data());
    const char* why = strerror(errno);
    (void)!write(STDERR_FILENO, failed.data(), failed.size());
    (void)!write(STDERR_FILENO, why, strlen(why));
    (void)!write(STDERR_FILENO, "\n", 1);
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return 127;
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 127;
}

}  // namespace tpuemu::cli
