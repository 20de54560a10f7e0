#include "daemon/worker_settings.h"

#include <functional>
#include <string>

#include <spdlog/spdlog.h>

#include "sandbox/support.h"
#include "service/workers/ssh_probe.h"

namespace tpuemu::daemon {

// The worker sandboxes the settings ask for and the host allows (sandbox::Probe), or why not.
service::WorkerOptions WorkerOptionsFor(const WorkerSettings& settings) {
  service::WorkerOptions o;
  o.dir = settings.dir;
  o.memory_limit_bytes = settings.memory_limit_bytes;
  o.pids_limit = settings.pids_limit;
  o.disk_bytes = settings.disk_bytes;
  o.disk_floor_bytes = settings.disk_floor_bytes;
  o.stop_grace_ms = settings.stop_grace_ms;
  o.boot_timeout_ms = settings.boot_timeout_ms;
  o.max_workers_per_node = settings.max_workers_per_node;
  o.max_workers = settings.max_workers;
  if (settings.mode != "auto") return o;  // nodes carry no sandbox field at all
  sandbox::Support support = sandbox::Probe(settings.dir, settings.helper, settings.hidden);
  if (!support.ok) {
    o.disabled_reason = support.reason;
    spdlog::warn("{} (nodes behave as records only; --worker-sandboxes off silences this)",
                 support.reason);
    return o;
  }
  // One /16 of loopback addresses per tpuemud, the same after a restart where it can be.
  const int network = service::ClaimWorkerNetwork(
      static_cast<int>(std::hash<std::string>{}(settings.dir) % 254) + 1);
  if (network == 0) {
    o.disabled_reason =
        "worker sandboxes off: no free 127.<n>.0.0/16 (every /run/tpuemu lock "
        "is held by another tpuemud)";
    spdlog::warn("{}", o.disabled_reason);
    return o;
  }
  o.enabled = true;
  o.network = network;
  // One range per tpuemud by default, beside its loopback /16 (flags.cpp checked a given one).
  o.subnet =
      settings.subnet.empty() ? "10." + std::to_string(network) + ".0.0/16" : settings.subnet;
  o.support = support;
  // The host's capacity (-1: derived from this host), logged so a stockout can be explained.
  o.memory_budget_bytes = settings.memory_budget_bytes < 0 ? service::HostMemoryTotalBytes()
                                                           : settings.memory_budget_bytes;
  o.pids_budget = settings.pids_budget < 0 ? service::HostPidsForWorkers() : settings.pids_budget;
  o.disk_budget_bytes = settings.disk_budget_bytes < 0 ? service::FreeBytesAt(settings.dir)
                                                       : settings.disk_budget_bytes;
  spdlog::info(
      "worker capacity of this host (a create past it is a stockout): --worker-max {}, memory "
      "limits {} MiB, pids {}, boot disks {} MiB (0 = no budget)",
      o.max_workers, o.memory_budget_bytes >> 20, o.pids_budget, o.disk_budget_bytes >> 20);
  std::string note;
  o.ssh_port = service::ChooseSshPort(settings.ssh_port, &note);
  spdlog::info("worker sandboxes on: files in {}, addresses 127.{}.0.0/16 (internal {}); {}{}",
               settings.dir, network, o.subnet, note,
               support.limits_note.empty() ? "" : "; " + support.limits_note);
  spdlog::info("worker user namespaces: root inside is host uid {} (ids {}..{}); {}",
               support.id_first, support.id_first, support.id_first + support.id_count - 1,
               support.disks
                   ? "boot disks of " + std::to_string(settings.disk_bytes >> 20) + " MiB (sparse)"
                   : support.disk_note);
  return o;
}

}  // namespace tpuemu::daemon
