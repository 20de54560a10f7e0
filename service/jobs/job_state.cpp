#include "service/jobs/job_state.h"

#include <array>
#include <string>

namespace tpuemu::service {
namespace {

struct StateName {
  JobState state;
  std::string_view name;
};

constexpr std::array<StateName, 6> kStateNames = {{
    {JobState::kQueued, "QUEUED"},
    {JobState::kRunning, "RUNNING"},
    {JobState::kSucceeded, "SUCCEEDED"},
    {JobState::kFailed, "FAILED"},
    {JobState::kCancelled, "CANCELLED"},
    {JobState::kTimedOut, "TIMED_OUT"},
}};

}  // namespace

std::string_view JobStateName(JobState state) {
  for (const StateName& s : kStateNames) {
    if (s.state == state) return s.name;
  }
  return "?";
}

Result<JobState> ParseJobState(std::string_view name) {
  for (const StateName& s : kStateNames) {
    if (s.name == name) return s.state;
  }
  return Status::InvalidArgument("'" + std::string(name) + "' is not a job state");
}

bool IsTerminal(JobState state) {
  return state != JobState::kQueued && state != JobState::kRunning;
}

int ExitCodeOf(JobState state) {
  switch (state) {
    case JobState::kSucceeded:
      return kExitSucceeded;
    case JobState::kTimedOut:
      return kExitTimedOut;
    case JobState::kCancelled:
      return kExitCancelled;
    default:
      return kExitFailed;
  }
}

}  // namespace tpuemu::service
