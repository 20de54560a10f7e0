// The one chip model: what every time tpuemu gives for a TPU is made of. A job's HLO cost model
// (engine/hlo/cost_model.h), `tpuemu-engine estimate` and `compare` for training
// (engine/cost/estimate.h) and for serving (engine/cost/serving.h) all price with these
// functions and the same calibrated Efficiency (efficiency.h); docs/cost-model.md, "One chip
// model", says what each part is and where its numbers come from.
//
//  * MXU: the fold model of one systolic array (timing.h DotCost), at Efficiency::mxu of its
//    ideal rate in the TPU timing mode (the SCALE-Sim mode reproduces SCALE-Sim and stays ideal).
//  * Vector unit: 8 sublanes x 128 lanes per TensorCore, one op per lane and cycle (timing.h).
//  * HBM: a TensorCore's share of the chip's bandwidth, at Efficiency::hbm.
//  * Collectives: TensorCores of one chip exchange through its HBM; chips over ICI on the slice's
//    torus (ici.h: axes, wraparound, links per axis at Efficiency::ici, a latency per hop).
//  * Host link: one per chip (host_link.h), at Efficiency::host.
// Every function is pure: thread-safe.
#pragma once

#include <cstdint>

#include "engine/chip/efficiency.h"
#include "engine/chip/ici.h"
#include "engine/chip/timing.h"
#include "engine/hardware/hardware.h"

namespace tpuemu::engine {

using cost::Efficiency;
using cost::IciGroup;
using cost::kDefaultEfficiency;

// MXU cycles of a GEMM whose ideal fold-model cycles (DotCost's compute_cycles) are `ideal`:
// ⌈ideal / Efficiency::mxu⌉ in TimingMode::kTpu, `ideal` in kScaleSim.
int64_t MxuCycles(int64_t ideal, TimingMode mode, const Efficiency& eff = kDefaultEfficiency);

// A DotCost (timing.h) as the chip runs it: in TimingMode::kTpu its MXU cycles at
// Efficiency::mxu (MxuCycles) and its HBM cycles at Efficiency::hbm, the totals, bound and
// utilization recomputed; unchanged in kScaleSim. `tpuemu-engine estimate --gemm` reports this.
OpCost OnChip(const ChipSpec& spec, OpCost ideal, int tensorcores, TimingMode mode,
              const Efficiency& eff = kDefaultEfficiency);

// Vector-unit cycles of `ops` element operations spread evenly over `tensorcores` TensorCores.
int64_t VectorCycles(double ops, int tensorcores);

// HBM cycles of `bytes` spread evenly over `tensorcores` TensorCores of one chip, each at its
// share of the chip's bandwidth times Efficiency::hbm.
int64_t HbmCycles(const ChipSpec& spec, double bytes, int tensorcores,
                  const Efficiency& eff = kDefaultEfficiency);

// One priced piece of work: the unit-bound parts, and the roofline that joins them. MXU and
// vector work of one op run one after the other (a fusion's dot and its epilogue); HBM traffic
// overlaps them; a collective on the critical path adds.
struct ChipCycles {
  int64_t mxu = 0, vector = 0, memory = 0, collective = 0;
  int64_t Compute() const { return mxu + vector; }
  int64_t Total() const;  // max(mxu + vector, memory) + collective
};

enum class Collective { kAllReduce, kAllGather, kReduceScatter, kAllToAll, kPermute };

// The chips of a collective over `chips` chips of `type`, laid over the slice's torus the way a
// tensor-parallel group is (ici.h MeshFor); a line of `chips` when they do not factor into its
// axes.
IciGroup CollectiveGroup(const AcceleratorType& type, int chips);

// Seconds of one collective of a `bytes`-byte array (the whole array, unsharded) over `chips`
// (ICI) with `tensorcores_per_chip` TensorCores taking part on each chip (through its HBM, a ring
// moving (p−1)/p of the array per half). An all-reduce is a reduce-scatter then an all-gather;
// an all-to-all and a collective-permute move `bytes` once (ici.h AllToAllSeconds, one hop).
double CollectiveSeconds(const ChipSpec& spec, Collective kind, const IciGroup& chips,
                         int tensorcores_per_chip, double bytes,
                         const Efficiency& eff = kDefaultEfficiency);
int64_t CollectiveCycles(const ChipSpec& spec, Collective kind, const IciGroup& chips,
                         int tensorcores_per_chip, double bytes,
                         const Efficiency& eff = kDefaultEfficiency);

// A collective among `participants` TensorCores of a slice of `type`, packed onto chips
// tensorcores_per_chip at a time: those of one chip through its HBM, the chips over ICI
// (CollectiveGroup). 0 for one participant. A job's data-parallel gradient all-reduce and a dot
// split over TensorCores (engine/hlo/cost_compute.cpp) both take this.
int64_t TensorCoreCollectiveCycles(const AcceleratorType& type, Collective kind, int participants,
                                   double bytes, const Efficiency& eff = kDefaultEfficiency);

// Seconds to move `bytes` one way between one chip's HBM and its host's memory.
double HostLinkSeconds(Generation generation, double bytes,
                       const Efficiency& eff = kDefaultEfficiency);

}  // namespace tpuemu::engine
