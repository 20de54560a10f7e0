// The files tpuemud gives a worker at each boot, in the worker's config folder on the host
// (`<worker dir>/config`, bound read-only at /etc/tpuemu inside): sshd's configuration and host
// key, /etc/hosts (metadata.google.internal and every worker of the node), /etc/hostname, the
// login environment (/etc/profile.d/tpuemu-tpu.sh) and the startup script (the account agent is
// account_agent.h); and tpuctl, as tpuctl and tpu-info, in /usr/local/bin. Not thread-safe per
// worker folder: one caller at a time (WorkerManager runs a node's work in order).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "sandbox/worker_box.h"
#include "service/nodes/node.h"
#include "service/workers/guest_metadata.h"

namespace tpuemu::service {

struct WorkerPaths {
  std::string dir;          // <workers dir>/<node uid>/<worker>
  std::string config;       // dir/config: bound at /etc/tpuemu
  std::string logs;         // dir/logs: the startup script's output (never visible inside)
  std::string startup_log;  // logs/startup-script.log
};
WorkerPaths PathsOf(const std::string& workers_dir, const Node& node, int worker);

// Writes every file of `worker`'s config folder for this boot (making the host key once) and
// returns the binds that put them in place inside.
Result<std::vector<sandbox::Bind>> WriteWorkerFiles(const sandbox::Support& support,
                                                    const WorkerPaths& paths, const Node& node,
                                                    int worker, const GuestContext& context);

// The chips of one worker's host as its software finds them (sandbox/tpu_devices.h): the node's
// chips per host, its generation's PCI device id (torch_xla's _TPU_PCI_DEVICE_IDS: 0x0027 v2/v3,
// 0x005e v4, 0x0062 v5p, 0x0063 v5e, 0x006f v6e) and device nodes (/dev/accel* up to v4, VFIO
// from v5e on).
sandbox::TpuDevices TpuDevicesOf(const Node& node);

// The tpuctl binary workers get as /usr/local/bin/tpuctl and tpu-info: beside the running
// program, in the build tree's cli/ (tpuemud or a test binary of the build), or in /usr/local/bin
// or /usr/bin; "" when there is none.
std::string FindTpuctl();

// The worker's SSH host public key ("ssh-ed25519 AAAA…"); NOT_FOUND before its first boot.
Result<std::string> HostPublicKey(const WorkerPaths& paths);

// The command that runs sshd for one connection on its standard input and output (inetd mode).
std::vector<std::string> SshdCommand(const sandbox::Support& support);

// The startup script's command (a script with "#!" runs as its own program, else with bash).
std::vector<std::string> StartupScriptCommand(const std::string& script);

}  // namespace tpuemu::service
