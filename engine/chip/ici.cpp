#include "engine/chip/ici.h"

#include <charconv>

namespace tpuemu::engine::cost {
namespace {

std::vector<int> ParseTopology(const std::string& topology) {
  std::vector<int> dims;
  size_t start = 0;
  while (start <= topology.size()) {
    const size_t end = std::min(topology.find('x', start), topology.size());
    int v = 0;
    std::from_chars(topology.data() + start, topology.data() + end, v);
    dims.push_back(std::max(v, 1));
    start = end + 1;
  }
  return dims;
}

// Whether an axis of `size` chips of a `chips`-chip slice wraps around (see the header).
bool Wraps(Generation g, int size, int chips) {
  switch (g) {
    case Generation::kV5e:
    case Generation::kV6e:
      return size == 16;
    case Generation::kV4:
    case Generation::kV5p:
      return chips >= 64 && size >= 4;
    case Generation::kV2:
      return size == 16;
    case Generation::kV3:
      return size == 32;
  }
  return false;
}

// Bytes per second a group moves into each chip, and the ring steps it takes.
double GroupBandwidth(const ChipSpec& spec, const IciGroup& group, const Efficiency& eff) {
  double bw = 0;
  for (const IciAxis& a : group.axes) {
    if (a.size > 1) bw += spec.ici_link_bandwidth_bytes_per_s * (a.wraps ? 2.0 : 1.0);
  }
  return bw * eff.ici;
}

int RingSteps(const IciGroup& group) {
  int steps = 0;
  for (const IciAxis& a : group.axes) steps += a.size - 1;
  return steps;
}

}  // namespace

int IciGroup::Chips() const {
  int n = 1;
  for (const IciAxis& a : axes) n *= a.size;
  return n;
}

Result<SliceMesh> MeshFor(const AcceleratorType& type, int tp) {
  SliceMesh mesh;
  const std::vector<int> dims = ParseTopology(type.topology);
  for (int d : dims) mesh.all.axes.push_back({d, Wraps(type.generation, d, type.chips)});
  if (tp < 1 || type.chips % tp != 0) {
    return Status::InvalidArgument("tensor parallelism " + std::to_string(tp) +
                                   " does not divide " + type.name + "'s " +
                                   std::to_string(type.chips) + " chips");
  }
  int left = tp;
  for (const IciAxis& axis : mesh.all.axes) {
    // The largest factor of what is left that divides this axis.
    int g = 1;
    for (int f = std::min(left, axis.size); f >= 1; --f) {
      if (left % f == 0 && axis.size % f == 0) {
        g = f;
        break;
      }
    }
    left /= g;
    mesh.tp.axes.push_back({g, g == axis.size && axis.wraps});
    mesh.replicas.axes.push_back({axis.size / g, g == 1 && axis.wraps});
  }
  if (left != 1) {
    return Status::InvalidArgument("tensor parallelism " + std::to_string(tp) +
                                   " does not fit the axes of " + type.name + " (" + type.topology +
                                   ")");
  }
  return mesh;
}

double AllGatherSeconds(const ChipSpec& spec, const IciGroup& group, double bytes,
                        const Efficiency& eff) {
  const int n = group.Chips();
  if (n <= 1 || bytes <= 0) return 0;
  return bytes * (n - 1) / n / GroupBandwidth(spec, group, eff) +
         RingSteps(group) * eff.ici_hop_seconds;
}

double ReduceScatterSeconds(const ChipSpec& spec, const IciGroup& group, double bytes,
                            const Efficiency& eff) {
  return AllGatherSeconds(spec, group, bytes, eff);
}

double AllReduceSeconds(const ChipSpec& spec, const IciGroup& group, double bytes,
                        const Efficiency& eff) {
  return 2 * AllGatherSeconds(spec, group, bytes, eff);
}

double AllToAllSeconds(const ChipSpec& spec, const IciGroup& group, double bytes_per_chip,
                       const Efficiency& eff) {
  const int n = group.Chips();
  if (n <= 1 || bytes_per_chip <= 0) return 0;
  return AllGatherSeconds(spec, group, bytes_per_chip * n / 4.0, eff);
}

}  // namespace tpuemu::engine::cost
