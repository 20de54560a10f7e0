// Preempter: spot and preemptible TPU VMs being taken back, on request or at random — the fault
// users of the real service cannot cause (tensorflow#61552) and orchestrators most often get
// wrong.
//
// A READY node whose schedulingConfig has spot or preemptible (queued resources of the spot and
// bestEffort tiers make such nodes) goes to PREEMPTED: its capacity goes back to the zone, it
// cannot be started again, only deleted; its jobs end with a reason (JobManager hears the state
// change); its queued resource goes SUSPENDING -> SUSPENDED with stateInitiator SERVICE (the
// queued resource manager hears it and deletes the slice's nodes).
// At random: every sweep_interval_ms each READY preemptible node is preempted with probability
// 1 - exp(-rate_per_hour * interval / 1 h), drawn from the seeded "preemption" stream, nodes in
// creation order — so a run with the same seed and the same nodes preempts the same ones.
//
// Threads: Preempt is thread-safe; the sweep runs on the scheduler thread. The node manager and
// scheduler are borrowed and must outlive the preempter; stop the scheduler first.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "base/status.h"
#include "service/common/scheduler.h"
#include "service/faults/fault_event.h"
#include "service/faults/seeded_rng.h"
#include "service/nodes/node_manager.h"

namespace tpuemu::service {

struct PreemptionOptions {
  double rate_per_hour = 0;  // expected preemptions of one node per hour; 0 = only on request
  int64_t sweep_interval_ms = 1000;
  uint64_t seed = 1;
};

class Preempter {
 public:
  Preempter(NodeManager& nodes, Scheduler& scheduler, PreemptionOptions options,
            FaultListener listener);

  // Preempts `key` now. FAILED_PRECONDITION unless it is READY, idle (no operation running)
  // and spot or preemptible; NOT_FOUND for an unknown node.
  Result<Node> Preempt(const NodeKey& key, const std::string& reason);
  // Starts the random sweep (again after POST /_emulator/reset cleared the scheduler).
  void Start();
  // The rate in force; changing it takes effect at the next sweep.
  double rate_per_hour() const { return rate_per_hour_.load(); }
  void set_rate_per_hour(double rate) { rate_per_hour_.store(rate < 0 ? 0 : rate); }

 private:
  void Sweep();

  NodeManager& nodes_;
  Scheduler& scheduler_;
  const int64_t sweep_interval_ms_;
  std::atomic<double> rate_per_hour_;
  SeededRng rng_;
  FaultListener listener_;
};

}  // namespace tpuemu::service
