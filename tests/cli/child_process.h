// ChildProcess: runs a program with extra environment variables and captures its exit code,
// stdout and stderr (read concurrently with poll(), so a chatty child never blocks on a full
// pipe). Start() returns at once, Finish() reads to EOF and reaps; Run() does both. stdin is
// /dev/null, so the child sees no terminal. One object per child; not thread-safe.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

extern char** environ;

namespace tpuemu::testing {

struct ProcessResult {
  int exit_code = -1;  // -signal when killed
  std::string out;
  std::string err;
};

class ChildProcess {
 public:
  ~ChildProcess() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      Finish();
    }
  }

  // `env` entries override (or, with an empty value, remove) variables of this process.
  bool Start(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env) {
    int out[2], err[2];
    if (pipe(out) != 0 || pipe(err) != 0) return false;
    std::vector<std::string> env_strings;
    for (char** e = environ; *e != nullptr; ++e) {
      std::string entry = *e;
      std::string name = entry.substr(0, entry.find('='));
      if (env.count(name) == 0) env_strings.push_back(entry);
    }
    for (const auto& [k, v] : env) {
      if (!v.empty()) env_strings.push_back(k + "=" + v);
    }
    std::vector<std::string> args = argv;
    pid_ = fork();
    if (pid_ == 0) {
      int devnull = open("/dev/null", O_RDONLY);
      dup2(devnull, STDIN_FILENO);
      dup2(out[1], STDOUT_FILENO);
      dup2(err[1], STDERR_FILENO);
      close(out[0]);
      close(out[1]);
      close(err[0]);
      close(err[1]);
      std::vector<char*> cargv, cenv;
      for (std::string& a : args) cargv.push_back(a.data());
      cargv.push_back(nullptr);
      for (std::string& e : env_strings) cenv.push_back(e.data());
      cenv.push_back(nullptr);
      execve(cargv[0], cargv.data(), cenv.data());
      _exit(127);
    }
    close(out[1]);
    close(err[1]);
    out_fd_ = out[0];
    err_fd_ = err[0];
    return pid_ > 0;
  }

  ProcessResult Finish() {
    ProcessResult result;
    pollfd fds[2] = {{out_fd_, POLLIN, 0}, {err_fd_, POLLIN, 0}};
    std::string* sinks[2] = {&result.out, &result.err};
    int open_fds = 2;
    char buf[4096];
    while (open_fds > 0) {
      if (poll(fds, 2, -1) < 0) break;
      for (int i = 0; i < 2; ++i) {
        if (fds[i].fd < 0 || fds[i].revents == 0) continue;
        ssize_t n = read(fds[i].fd, buf, sizeof(buf));
        if (n > 0) {
          sinks[i]->append(buf, static_cast<size_t>(n));
        } else {
          close(fds[i].fd);
          fds[i].fd = -1;
          --open_fds;
        }
      }
    }
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
    return result;
  }

  static ProcessResult Run(const std::vector<std::string>& argv,
                           const std::map<std::string, std::string>& env) {
    ChildProcess child;
    if (!child.Start(argv, env)) return {};
    return child.Finish();
  }

 private:
  pid_t pid_ = -1;
  int out_fd_ = -1;
  int err_fd_ = -1;
};

}  // namespace tpuemu::testing
