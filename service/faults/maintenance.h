// MaintenanceManager: host maintenance events on TPU VMs — v2alpha1's simulateMaintenanceEvent
// ("for testing the resilience of applications built on Cloud TPUs"), performMaintenance,
// performMaintenanceQueuedResource, and upcoming maintenance you schedule through the emulator.
//
// A maintenance event needs a READY node with no operation running. For --maintenance-duration-ms
// the node stays READY with health UNHEALTHY_MAINTENANCE (and, in v2alpha1, upcomingMaintenance
// {maintenanceStatus: ONGOING}); the listener hears MAINTENANCE_STARTED naming the affected
// workers (the daemon interrupts the node's running job there) and MAINTENANCE_ENDED when health
// is HEALTHY again. The call's Operation completes at the end, with the Node as its response.
// Scheduled maintenance (Schedule) shows as upcomingMaintenance {type: SCHEDULED,
// maintenanceStatus: PENDING, window…} and starts on its own at windowStartTime, unless
// performMaintenance starts it earlier.
// Everything is stored with the node, so Recover() after a restart ends the running events and
// starts the scheduled ones on time.
//
// Threads: public calls are thread-safe (they run on the write path's batcher, as the nodes'
// writes do); timers run on the scheduler thread. Borrowed: the write path (its batcher and
// Operations), node manager, queued resource manager and scheduler, which must outlive this object
// (stop the scheduler first).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "service/common/scheduler.h"
#include "service/faults/fault_event.h"
#include "service/nodes/node_manager.h"
#include "service/operations/operation.h"
#include "service/queued_resources/queued_resource_manager.h"
#include "service/write_path/write_path.h"

namespace tpuemu::service {

struct MaintenanceOptions {
  int64_t duration_ms = 30000;  // how long a maintenance event keeps a node unhealthy
};

class MaintenanceManager {
 public:
  MaintenanceManager(WritePath& writes, NodeManager& nodes, QueuedResourceManager& queued_resources,
                     Scheduler& scheduler, MaintenanceOptions options, FaultListener listener);

  // Schedules the end of every running event and the start of every scheduled one on the nodes
  // this replica recovered (NodeManager::recovered()).
  Status Recover();
  // The same for `nodes` (a replica adopted them: NodeManager::Adopt). Ending or starting an
  // event twice is harmless: each checks the node as stored.
  void ScheduleTimers(const std::vector<Node>& nodes);

  // simulateMaintenanceEvent: `worker_ids` are decimal worker numbers; empty = worker 0.
  // INVALID_ARGUMENT naming workerIds for a worker the node does not have.
  Result<Operation> Simulate(const NodeKey& key, const std::vector<std::string>& worker_ids);
  // performMaintenance: every worker, now (a scheduled window is consumed).
  Result<Operation> Perform(const NodeKey& key);
  // performMaintenanceQueuedResource: the named nodes of the queued resource (node ids or full
  // names; empty = all of them). One Operation on the queued resource, done when every event
  // ended. INVALID_ARGUMENT for a node that is not the queued resource's.
  Result<Operation> PerformOnQueuedResource(const QrKey& key,
                                            const std::vector<std::string>& node_names);
  // Emulator: announces maintenance starting `start_in_ms` from now (type SCHEDULED or
  // UNSCHEDULED; `can_reschedule` as the node will report it). The node as written.
  Result<Node> Schedule(const NodeKey& key, int64_t start_in_ms, const std::string& type,
                        bool can_reschedule);

 private:
  // Starts an event on `key` inside the caller's write batch; `op` (may be empty) completes at
  // its end.
  Status Begin(Node& node, const std::vector<int>& workers, const std::string& kind,
               const std::string& operation);
  void Started(const Node& node);
  void End(const NodeKey& key);
  void StartScheduled(const NodeKey& key);
  void ScheduleTimers(const Node& node);

  WritePath& writes_;
  NodeManager& nodes_;
  QueuedResourceManager& queued_resources_;
  Scheduler& scheduler_;
  const MaintenanceOptions options_;
  FaultListener listener_;
};

}  // namespace tpuemu::service
