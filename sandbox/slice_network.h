// SliceNetwork: the private network the workers of one slice share, as a VPC subnet is on
// Google Cloud — a network namespace holding a bridge, kept by a small `tpuemu-sandbox net`
// process. Each worker (its own network namespace, worker_box.h) joins it with a veth pair:
// eth0 inside at its internal address, the peer on the bridge. The addresses exist only in
// namespaces tpuemud made: the host's namespace has no interface, route or NAT for them, and
// nothing is routed off the machine.
//
// Ownership: a SliceNetwork owns its holder process; destroying it (or tpuemud dying: the holder
// reads the same lifeline as the boot helpers) ends the namespace, its bridge and every veth on
// it. Workers booted on it keep their own namespaces but lose the link. Thread-safe.
#pragma once

#include <sys/types.h>

#include <memory>

#include "base/status.h"
#include "sandbox/support.h"

namespace tpuemu::sandbox {

class SliceNetwork {
 public:
  // Starts the holder of a network whose workers' addresses are in `subnet` ("10.0.0.0/8");
  // INTERNAL naming the step that failed. `support` must be ok.
  static Result<std::unique_ptr<SliceNetwork>> Create(const Support& support,
                                                      const std::string& subnet);
  ~SliceNetwork();  // SIGKILL to the holder, reaped
  SliceNetwork(const SliceNetwork&) = delete;
  SliceNetwork& operator=(const SliceNetwork&) = delete;

  // The holder's PID as the host sees it (BootSpec::network_pid).
  pid_t pid() const { return holder_pid_; }

  // A listening TCP socket (non-blocking, close-on-exec; the caller owns it) on ip:port in the
  // network's namespace, where the workers reach it and the host does not: tpuemud serves the
  // metadata server there at 169.254.169.254:80 (the bridge's address; a peer's address tells
  // which worker asks, and no worker's own ports are taken). UNAVAILABLE naming the step that
  // failed; INVALID_ARGUMENT for an ip that is not IPv4.
  Result<int> Listen(const std::string& ip, uint16_t port) const;

 private:
  SliceNetwork() = default;
  pid_t holder_pid_ = 0;
};

}  // namespace tpuemu::sandbox
