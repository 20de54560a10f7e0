// Whether a worker answers SSH: connects to ip:port and reads the server's identification line
// ("SSH-2.0-OpenSSH_9.2p1 …") within `timeout`. Blocking; thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "base/status.h"

namespace tpuemu::service {

// The identification line; UNAVAILABLE naming ip:port and what failed (refused, timed out,
// closed before a line).
Result<std::string> ReadSshBanner(const std::string& ip, uint16_t port,
                                  std::chrono::milliseconds timeout);

// The port every worker's SSH will use: `wanted` when a loopback address can bind it (a host
// sshd on 0.0.0.0:22 or a non-root process cannot), else a free port of the kernel's choice.
// `note` says which and why.
uint16_t ChooseSshPort(uint16_t wanted, std::string* note);

// Claims a /16 of loopback addresses for this process's workers, 127.<n>.0.0/16 with n in
// 1..254, so that several tpuemud processes on one host (tests in parallel, replicas) never hand
// out one address twice: an flock on /run/tpuemu/worker-net-<n>.lock, held until the process
// exits. Tries `preferred` first (a hash of the workers' folder: the same after a restart), then
// the next ones. 0 when every one is taken or the lock folder cannot be made.
int ClaimWorkerNetwork(int preferred);

}  // namespace tpuemu::service
