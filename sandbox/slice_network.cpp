#include "sandbox/slice_network.h"

#include <signal.h>

#include <chrono>
#include <string>
#include <vector>

#include "sandbox/process.h"

namespace tpuemu::sandbox {

Result<std::unique_ptr<SliceNetwork>> SliceNetwork::Create(const Support& support) {
  if (!support.ok) {
    return Status::FailedPrecondition("worker sandboxes are off: " + support.reason);
  }
  Result<std::pair<pid_t, pid_t>> started = internal::StartHelper(
      support.helper, {support.helper, "net", "--ip", support.ip, "--lifeline-fd", "3"},
      std::chrono::milliseconds(10000), "make a slice network");
  if (!started.ok()) return started.status();
  std::unique_ptr<SliceNetwork> network(new SliceNetwork());
  network->holder_pid_ = started->first;  // the holder reports its own PID
  return network;
}

SliceNetwork::~SliceNetwork() {
  if (holder_pid_ <= 0) return;
  kill(holder_pid_, SIGKILL);
  (void)internal::WaitChild(holder_pid_, std::chrono::milliseconds(-1));
}

}  // namespace tpuemu::sandbox
