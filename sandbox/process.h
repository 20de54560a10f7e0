// Processes and descriptors for sandbox/ (internal): spawning with only the descriptors asked for,
// pidfds, waiting with deadlines.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"

namespace tpuemu::sandbox::internal {

// "No such file or directory" (strerror_r, thread-safe).
std::string ErrnoText(int err);

// pidfd_open(2); -1 when the kernel lacks it or `pid` is gone.
int PidfdOpen(pid_t pid);

// posix_spawn of `path` with `argv` and `env`; stdin/stdout/stderr from `stdio` (-1 = /dev/null)
// and `extra` {caller fd, child fd} pairs; default signal dispositions, an empty signal mask and
// a session of its own. Every other descriptor of this process is close-on-exec or closed by the
// helper itself. The caller's descriptors stay open.
Result<pid_t> SpawnProcess(const std::string& path, const std::vector<std::string>& argv,
                           const std::vector<std::string>& env, const int (&stdio)[3],
                           const std::vector<std::pair<int, int>>& extra = {});

// Waits for child `pid` up to `timeout` (negative = forever) and reaps it; the wait status, or
// nothing when it still runs at the deadline.
std::optional<int> WaitChild(pid_t pid, std::chrono::milliseconds timeout);

// The read end of this process's lifeline pipe (worker_box.h): every helper that must die with
// tpuemud holds it as descriptor 3 and exits when it reads EOF. Made on first use, and again in
// a forked child (whose inherited copy its parent also holds). -1 when no pipe can be made.
int LifelineReadEnd();

// Starts tpuemu-sandbox `argv` (argv[0] the helper) with the lifeline as descriptor 3 and waits
// up to `timeout` for its stderr to say "ready <pid>"; returns {the helper's PID, that pid}.
// Otherwise the helper is killed and reaped, and the error is INTERNAL with `what` and the
// helper's one line naming the failed step, or UNAVAILABLE when it did not report in time.
Result<std::pair<pid_t, pid_t>> StartHelper(const std::string& helper,
                                            const std::vector<std::string>& argv,
                                            std::chrono::milliseconds timeout,
                                            const std::string& what);

// Absolute path of an executable named `name` on $PATH (or `name` itself when it has a '/' and
// is executable); "" when there is none.
std::string FindExecutable(const std::string& name);

}  // namespace tpuemu::sandbox::internal
