// JobState: the life cycle of a job, QUEUED -> RUNNING -> one terminal state, each terminal state
// with its shell-style exit code (documented in the README):
//   SUCCEEDED 0 | FAILED 1 | TIMED_OUT 124 (as timeout(1)) | CANCELLED 130 (as Ctrl-C).
// RUNNING -> QUEUED happens once: a restart of tpuemud re-queues the jobs it interrupted.
// The store keeps the name (db/job_repository.h); service/ converts where it reads and writes rows.
// Stateless functions: thread-safe.
#pragma once

#include <string_view>

#include "base/status.h"

namespace tpuemu::service {

enum class JobState { kQueued, kRunning, kSucceeded, kFailed, kCancelled, kTimedOut };

inline constexpr int kExitSucceeded = 0;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitTimedOut = 124;
inline constexpr int kExitCancelled = 130;

std::string_view JobStateName(JobState state);  // "QUEUED", "RUNNING", ..., "TIMED_OUT"
// INVALID_ARGUMENT naming the text when it is not a JobStateName.
Result<JobState> ParseJobState(std::string_view name);
bool IsTerminal(JobState state);
// The exit code a job ends with in a terminal `state`; kExitFailed for a state that is not one.
int ExitCodeOf(JobState state);

}  // namespace tpuemu::service
