// DaemonProcess: runs the real tpuemud binary for end-to-end tests (restart, kill -9, signals).
// Start() waits for the "tpuemud ready on port N" line tpuemud prints once /readyz is 200.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <algorithm>

#include <cstdio>
#include <string>
#include <vector>

namespace tpuemu::testing {

// Flags for a test daemon: any free port, quiet logs, no provisioning or transition delay, the
// given store flags (e.g. {"--db", ":memory:"} or {"--data-dir", dir}) and then `extra`.
inline std::vector<std::string> TestDaemonArgs(std::vector<std::string> store,
                                               const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args = {
      "--port", "0", "--log-level", "warn", "--provisioning-delay-ms", "0", "--transition-delay-ms",
      "0"};
  args.insert(args.end(), store.begin(), store.end());
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

class DaemonProcess {
 public:
  ~DaemonProcess() { Kill(SIGKILL); }

  // Before Start: run tpuemud in `dir` (relative paths in its flags are relative to it).
  void SetWorkingDir(std::string dir) { cwd_ = std::move(dir); }
  // Before Start: pass `args` as they are, tpuemud's own defaults for everything else (as
  // scripts/run does), instead of the test defaults below.
  void KeepTpuemudDefaults() { tpuemud_defaults_ = true; }
  // Before Start: run this binary instead of the build's tpuemud (a bench comparing two builds).
  void SetBinary(std::string path) { bin_ = std::move(path); }

  // false when the binary could not start or never printed its ready line.
  // Worker sandboxes (service/workers/) run only where `args` ask for them
  // (`--worker-sandboxes auto`): they need root and cost processes per worker. Likewise write
  // push-back.
  bool Start(std::vector<std::string> args) {
    if (!tpuemud_defaults_ &&
        std::find(args.begin(), args.end(), "--worker-sandboxes") == args.end()) {
      args.insert(args.end(), {"--worker-sandboxes", "off"});
    }
    // Write push-back (429 past --max-write-lag-ms) only where a test asks: on a loaded machine a
    // slow fsync would turn a test's plain create into a 429.
    if (!tpuemud_defaults_ &&
        std::find(args.begin(), args.end(), "--max-write-lag-ms") == args.end()) {
      args.insert(args.end(), {"--max-write-lag-ms", "0"});
    }
    int out[2];
    if (pipe(out) != 0) return false;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(out[1], STDOUT_FILENO);
      close(out[0]);
      close(out[1]);
      if (!cwd_.empty() && chdir(cwd_.c_str()) != 0) _exit(126);
      std::vector<char*> argv;
      std::string bin = bin_;
      argv.push_back(bin.data());
      std::vector<std::string> copy = args;
      for (std::string& a : copy) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(bin.c_str(), argv.data());
      _exit(127);
    }
    close(out[1]);
    stdout_ = fdopen(out[0], "r");
    char line[512];
    // Blocks until the line arrives or the child exits (EOF): no sleeping.
    while (std::fgets(line, sizeof(line), stdout_) != nullptr) {
      unsigned port = 0;
      if (std::sscanf(line, "tpuemud ready on port %u", &port) == 1) {
        port_ = static_cast<uint16_t>(port);
        return true;
      }
    }
    return false;
  }

  // Sends `signal` and reaps the child; returns its exit status (or -signal), 0 if not running.
  int Kill(int signal) {
    if (pid_ <= 0) return 0;
    ::kill(pid_, signal);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    if (stdout_ != nullptr) std::fclose(stdout_);
    stdout_ = nullptr;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
  }

  uint16_t port() const { return port_; }
  pid_t pid() const { return pid_; }  // -1 when not running

 private:
  pid_t pid_ = -1;
  FILE* stdout_ = nullptr;
  uint16_t port_ = 0;
  std::string cwd_;                // "": the test's own
  std::string bin_ = TPUEMUD_BIN;  // SetBinary
  bool tpuemud_defaults_ = false;  // KeepTpuemudDefaults
};

}  // namespace tpuemu::testing
