// The inter-chip interconnect of a slice, for pricing collectives: the slice's torus/mesh axes
// (from its topology, "4x4" or "2x2x4"), which of them wrap around, and how a tensor-parallel
// group and the data-parallel replicas are laid over them.
//
// Model (docs/cost-model.md, "Collectives"): an all-gather or reduce-scatter of a V-byte array
// over a group of n chips moves V·(n−1)/n bytes into every chip; the group's axes carry it in
// parallel, each axis at 2 links' bandwidth when it wraps around (a bidirectional ring) and 1
// link's when it does not (a line), times Efficiency::ici; each ring step adds a hop latency.
// An all-reduce is a reduce-scatter then an all-gather. Wraparound (reference: the scaling book,
// "How to Scale Your Model", tpus.md): v5e and v6e axes wrap only at their full size 16; v4 and
// v5p slices of whole 4x4x4 cubes (>= 64 chips) wrap on every axis; v2 and v3 at the full pod
// (16 and 32). Pure functions: thread-safe.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "engine/chip/efficiency.h"
#include "engine/hardware/hardware.h"

namespace tpuemu::engine::cost {

struct IciAxis {
  int size = 1;
  bool wraps = false;
};

// A set of chips a collective runs over: a sub-grid of the slice, one IciAxis per dimension.
struct IciGroup {
  std::vector<IciAxis> axes;
  int Chips() const;
};

// The slice's axes, and the split of its chips into a tensor-parallel group of `tp` chips (laid
// over the leading axes, so that it stays inside a host when it can) and the data-parallel
// replicas (the complementary sub-grid).
struct SliceMesh {
  IciGroup all;
  IciGroup tp;
  IciGroup replicas;
};

// INVALID_ARGUMENT when `tp` does not factor into the slice's axes (e.g. 3 on a 4x4).
Result<SliceMesh> MeshFor(const AcceleratorType& type, int tp);

// Seconds for one collective of a `bytes`-byte array (the full, unsharded size) over `group`.
double AllGatherSeconds(const ChipSpec& spec, const IciGroup& group, double bytes,
                        const Efficiency& eff = kDefaultEfficiency);
double ReduceScatterSeconds(const ChipSpec& spec, const IciGroup& group, double bytes,
                            const Efficiency& eff = kDefaultEfficiency);
double AllReduceSeconds(const ChipSpec& spec, const IciGroup& group, double bytes,
                        const Efficiency& eff = kDefaultEfficiency);
// An all-to-all in which every chip of `group` sends `bytes_per_chip` bytes spread evenly over
// the group's chips. On a ring of n chips a chunk travels n/4 hops on average (n/8 each way when
// the ring wraps around), so it costs what an all-gather of bytes_per_chip·n/4 does on the same
// axes. Mixture-of-experts dispatch and combine.
double AllToAllSeconds(const ChipSpec& spec, const IciGroup& group, double bytes_per_chip,
                       const Efficiency& eff = kDefaultEfficiency);

}  // namespace tpuemu::engine::cost
