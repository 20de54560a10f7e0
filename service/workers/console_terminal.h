// ConsoleTerminal: one login through the dashboard's SSH button, as the Cloud console's
// SSH-in-browser does it: a fresh key pair (ssh-keygen), the public key made the person's for a
// while on the worker (WorkerManager::AddConsoleKey, a google-ssh key that expires), and
// OpenSSH's client logging in with it — to the worker's external address, through its sshd and
// its SSH budgets like any login — on a pseudo-terminal whose master side the caller reads and
// writes (api/terminal_session.h bridges it to a WebSocket). The user is a user of that name
// with passwordless sudo, as the account agent makes every ssh-keys user.
//
// Files: the key pair and known_hosts (the worker's host key: strict checking) live in a private
// folder under the workers' folder, gone with the terminal.
//
// Ownership: owns the ssh process and the master descriptor; the destructor ends the login
// (End). Threads: Resize and End may be called from any thread; fd() is immutable.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "base/status.h"
#include "service/workers/worker_manager.h"

namespace tpuemu::service {

// The login name for a signed-in person: the local part of an e-mail address (or the name as
// given), lower-cased, characters other than [a-z0-9_.-] as '_', at most 32 characters, and not
// starting with a digit or '-' ("u" is put in front). "tpuemu" for an empty name.
std::string ConsoleUserName(const std::string& principal);

class ConsoleTerminal {
 public:
  struct Options {
    std::string node_name;  // "projects/p/locations/z/nodes/n"
    int worker = 0;
    std::string user;  // the login name (ConsoleUserName)
    int cols = 80;
    int rows = 24;
    std::chrono::minutes key_lifetime{30};  // the console's key expires after this
  };
  // Everything up to a running ssh client: the key, the user on the worker, the process.
  // FAILED_PRECONDITION when the worker does not run, UNAVAILABLE when ssh or ssh-keygen is
  // missing or fails to start.
  static Result<std::unique_ptr<ConsoleTerminal>> Open(WorkerManager& workers,
                                                       const Options& options);
  ~ConsoleTerminal();  // End()
  ConsoleTerminal(const ConsoleTerminal&) = delete;
  ConsoleTerminal& operator=(const ConsoleTerminal&) = delete;

  // The pseudo-terminal's master side (non-blocking): what the login prints, what it reads.
  int fd() const { return master_fd_; }
  pid_t pid() const { return pid_; }
  // The window's size; the login gets SIGWINCH (as a terminal emulator's resize does).
  Status Resize(int cols, int rows);
  // Ends the login: SIGHUP to ssh (its terminal hung up), SIGKILL after a second; reaps it and
  // removes the key files. Returns the exit status (ssh's, or 128 + signal). Idempotent.
  int End();

 private:
  ConsoleTerminal() = default;

  std::string dir_;  // the key folder
  int master_fd_ = -1;
  pid_t pid_ = 0;
  int exit_status_ = -1;
  bool ended_ = false;
};

}  // namespace tpuemu::service
