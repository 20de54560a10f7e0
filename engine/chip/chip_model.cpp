#include "engine/chip/chip_model.h"

#include <algorithm>
#include <cmath>

#include "engine/chip/host_link.h"

namespace tpuemu::engine {
namespace {

int64_t Cycles(double seconds, double clock_hz) {
  return seconds <= 0 ? 0 : static_cast<int64_t>(std::ceil(seconds * clock_hz));
}

}  // namespace

int64_t MxuCycles(int64_t ideal, TimingMode mode, const Efficiency& eff) {
  if (mode != TimingMode::kTpu || ideal <= 0) return std::max<int64_t>(ideal, 0);
  return static_cast<int64_t>(std::ceil(static_cast<double>(ideal) / eff.mxu));
}

OpCost OnChip(const ChipSpec& spec, OpCost c, int tensorcores, TimingMode mode,
              const Efficiency& eff) {
  if (mode != TimingMode::kTpu) return c;
  c.compute_cycles = MxuCycles(c.compute_cycles, mode, eff);
  c.memory_cycles = static_cast<int64_t>(std::ceil(static_cast<double>(c.memory_cycles) / eff.hbm));
  c.cycles = std::max(c.compute_cycles, c.memory_cycles) + c.collective_cycles;
  c.seconds = static_cast<double>(c.cycles) / spec.clock_hz;
  c.bound = BoundName(c.compute_cycles, c.memory_cycles, c.collective_cycles);
  const double peak = PeakFlopsPerCycle(spec, std::max(tensorcores, 1));
  c.mxu_utilization =
      c.cycles > 0 ? std::min(1.0, c.flops / (static_cast<double>(c.cycles) * peak)) : 0.0;
  return c;
}

int64_t VectorCycles(double ops, int tensorcores) {
  if (ops <= 0) return 0;
  return static_cast<int64_t>(std::ceil(ops / std::max(tensorcores, 1) / kVpuElementsPerCycle));
}

int64_t HbmCycles(const ChipSpec& spec, double bytes, int tensorcores, const Efficiency& eff) {
  if (bytes <= 0) return 0;
  const double bandwidth = spec.hbm_bandwidth_bytes_per_s / spec.tensorcores_per_chip *
                           std::max(tensorcores, 1) * eff.hbm;
  return Cycles(bytes / bandwidth, spec.clock_hz);
}

int64_t ChipCycles::Total() const { return std::max(Compute(), memory) + collective; }

IciGroup CollectiveGroup(const AcceleratorType& type, int chips) {
  if (chips <= 1) return IciGroup{{{1, false}}};
  Result<cost::SliceMesh> mesh = cost::MeshFor(type, chips);
  if (mesh.ok()) return mesh->tp;
  return IciGroup{{{chips, false}}};
}

double CollectiveSeconds(const ChipSpec& spec, Collective kind, const IciGroup& chips,
                         int tensorcores_per_chip, double bytes, const Efficiency& eff) {
  if (bytes <= 0) return 0;
  const int p = std::max(tensorcores_per_chip, 1);
  // On chip: a ring through the shared HBM, (p−1)/p of the array each half.
  const double half_on_chip =
      p > 1 ? (p - 1.0) / p * bytes / (spec.hbm_bandwidth_bytes_per_s * eff.hbm) : 0;
  switch (kind) {
    case Collective::kAllReduce:
      return 2 * half_on_chip + cost::AllReduceSeconds(spec, chips, bytes, eff);
    case Collective::kAllGather:
      return half_on_chip + cost::AllGatherSeconds(spec, chips, bytes, eff);
    case Collective::kReduceScatter:
      return half_on_chip + cost::ReduceScatterSeconds(spec, chips, bytes, eff);
    case Collective::kAllToAll:
      return half_on_chip +
             cost::AllToAllSeconds(spec, chips, bytes / std::max(chips.Chips(), 1), eff);
    case Collective::kPermute: {
      if (chips.Chips() <= 1) return half_on_chip;
      return bytes / (spec.ici_link_bandwidth_bytes_per_s * eff.ici) + eff.ici_hop_seconds;
    }
  }
  return 0;
}

int64_t CollectiveCycles(const ChipSpec& spec, Collective kind, const IciGroup& chips,
                         int tensorcores_per_chip, double bytes, const Efficiency& eff) {
  return Cycles(CollectiveSeconds(spec, kind, chips, tensorcores_per_chip, bytes, eff),
                spec.clock_hz);
}

int64_t TensorCoreCollectiveCycles(const AcceleratorType& type, Collective kind, int participants,
                                   double bytes, const Efficiency& eff) {
  if (participants <= 1) return 0;
  const ChipSpec& spec = Spec(type.generation);
  const int per_chip = std::min(participants, spec.tensorcores_per_chip);
  const int chips = (participants + per_chip - 1) / per_chip;
  return CollectiveCycles(spec, kind, CollectiveGroup(type, chips), per_chip, bytes, eff);
}

double HostLinkSeconds(Generation generation, double bytes, const Efficiency& eff) {
  if (bytes <= 0) return 0;
  return bytes / (cost::HostLinkBytesPerSecond(generation) * eff.host);
}

}  // namespace tpuemu::engine
