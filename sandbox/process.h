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

// Absolute path of an executable named `name` on $PATH (or `name` itself when it has a '/' and
// is executable); "" when there is none.
std::string FindExecutable(const std::string& name);

}  // namespace tpuemu::sandbox::internal
