#include "service/faults/preemption.h"

#include <cmath>

#include "service/common/clock.h"

namespace tpuemu::service {

Preempter::Preempter(NodeManager& nodes, Scheduler& scheduler, PreemptionOptions options,
                     FaultListener listener)
    : nodes_(nodes),
      scheduler_(scheduler),
      sweep_interval_ms_(std::max<int64_t>(10, options.sweep_interval_ms)),
      rate_per_hour_(options.rate_per_hour),
      rng_(options.seed, "preemption"),
      listener_(std::move(listener)) {}

Result<Node> Preempter::Preempt(const NodeKey& key, const std::string& reason) {
  const FaultEvent fault{key.project, key.zone, key.Name(), "PREEMPTED",
                         "node " + key.node_id + " was preempted: " + reason};
  auto event = [&](const Node&) { return FaultEventRow(fault); };
  Result<Node> node = nodes_.Amend(
      key,
      [&](Node& n, db::Txn&) -> Status {
        if (!n.Preemptible()) {
          return Status::FailedPrecondition(
              "Node '" + key.Name() +
              "' is not preemptible: only spot or preemptible nodes (schedulingConfig.spot or "
              ".preemptible, or a queued resource of the spot or bestEffort tier) can be "
              "preempted.");
        }
        if (n.state != NodeState::kReady || n.pending_operation) {
          return Status::FailedPrecondition(
              "Cannot preempt node '" + key.Name() + "' in state " +
              std::string(NodeStateName(n.state)) +
              (n.pending_operation ? " with an operation running" : "") +
              ": only a READY node is preempted.");
        }
        n.state = NodeState::kPreempted;
        n.capacity_released = true;
        n.maintenance = nullptr;
        n.upcoming_maintenance = nullptr;
        return Status::Ok();
      },
      event);
  if (!node.ok()) return node.status();
  if (listener_) listener_(fault);
  return node;
}

void Preempter::Start() {
  scheduler_.At(NowUnixMs() + sweep_interval_ms_, [this] { Sweep(); });
}

void Preempter::Sweep() {
  const double rate = rate_per_hour_.load();
  if (rate > 0) {
    const double p = 1 - std::exp(-rate * static_cast<double>(sweep_interval_ms_) / 3600000.0);
    int64_t after = 0;
    for (;;) {
      // Its own nodes only: with several replicas, each node is still swept once.
      Result<std::vector<Node>> page = nodes_.ListOwned(after, 1000);
      if (!page.ok() || page->empty()) break;
      for (const Node& n : *page) {
        after = n.seq;
        if (n.state != NodeState::kReady || !n.Preemptible() || n.pending_operation) continue;
        if (!rng_.Bernoulli(p)) continue;
        (void)Preempt(
            n.key, "random preemption (--preemption-rate-per-hour " + std::to_string(rate) + ")");
      }
    }
  }
  Start();
}

}  // namespace tpuemu::service
