#include "sandbox/slice_network.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "sandbox/process.h"

namespace tpuemu::sandbox {

Result<std::unique_ptr<SliceNetwork>> SliceNetwork::Create(const Support& support,
                                                           const std::string& subnet) {
  if (!support.ok) {
    return Status::FailedPrecondition("worker sandboxes are off: " + support.reason);
  }
  Result<std::pair<pid_t, pid_t>> started = internal::StartHelper(
      support.helper,
      {support.helper, "net", "--ip", support.ip, "--subnet", subnet, "--lifeline-fd", "3"},
      std::chrono::milliseconds(10000), "make a slice network");
  if (!started.ok()) return started.status();
  std::unique_ptr<SliceNetwork> network(new SliceNetwork());
  network->holder_pid_ = started->first;  // the holder reports its own PID
  return network;
}

Result<int> SliceNetwork::Listen(const std::string& ip, uint16_t port) const {
  const std::string where = ip + ":" + std::to_string(port) + " in a slice network";
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  if (inet_pton(AF_INET, ip.c_str(), &address.sin_addr) != 1) {
    return Status::InvalidArgument("listen on " + where + ": not an IPv4 address");
  }
  const int target =
      open(("/proc/" + std::to_string(holder_pid_) + "/ns/net").c_str(), O_RDONLY | O_CLOEXEC);
  if (target < 0) {
    return Status::Unavailable("listen on " + where + ": " + internal::ErrnoText(errno));
  }
  Result<int> result = Status::Internal("listen on " + where + ": not attempted");
  // setns of a network namespace moves only the calling thread: a thread of its own makes the
  // socket there and ends, and the socket stays in that namespace.
  std::thread maker([&] {
    auto failed = [&](const char* step) {
      result = Status::Unavailable("listen on " + where + ": " + step + ": " +
                                   internal::ErrnoText(errno));
    };
    if (setns(target, CLONE_NEWNET) != 0) return failed("join its network namespace");
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return failed("socket");
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0 ||
        listen(fd, 512) != 0) {
      failed("bind");
      close(fd);
      return;
    }
    result = fd;
  });
  maker.join();
  close(target);
  return result;
}

SliceNetwork::~SliceNetwork() {
  if (holder_pid_ <= 0) return;
  kill(holder_pid_, SIGKILL);
  (void)internal::WaitChild(holder_pid_, std::chrono::milliseconds(-1));
}

}  // namespace tpuemu::sandbox
