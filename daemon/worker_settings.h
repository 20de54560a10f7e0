// The worker sandboxes tpuemud runs (service/workers/): what --worker-sandboxes and the other
// worker flags ask for, checked against what this host allows.
#pragma once

#include "daemon/app.h"
#include "service/workers/worker_manager.h"

namespace tpuemu::daemon {

// "off": no sandbox considered (nodes carry no workerSandbox field). "auto": sandbox::Probe; when
// the host refuses, one warning line and nodes say why; else the SSH port and a /16 of loopback
// addresses of this process's own are chosen.
service::WorkerOptions WorkerOptionsFor(const WorkerSettings& settings);

}  // namespace tpuemu::daemon
