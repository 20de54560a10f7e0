// Host <-> device transfers of a job's step, for TransferToDeviceTime / TransferFromDeviceTime.
//
// What moves: the emulator keeps a job's weights and data on the host and feeds every parameter
// of the program each step (SGD updates weights host-side), then reads every output back. So per
// step: to device = the device bytes (bf16 = 2 bytes/element) of all parameters x shards, from
// device = the bytes of all outputs x shards.
// How fast: kHostLinkBytesPerSecond, an assumption rather than a published per-generation figure:
// one PCIe 3.0 x16 link between the host and the TPU (985 MB/s per lane x 16 = 15.75 GB/s
// theoretical), with all of a step's bytes serialised over it (an upper bound on the time).
// Pure functions: thread-safe.
#pragma once

#include <cstdint>

#include "engine/frontend/ir.h"

namespace tpuemu::service {

inline constexpr double kHostLinkBytesPerSecond = 15.75e9;

struct StepTransferBytes {
  int64_t to_device = 0;
  int64_t from_device = 0;
};

StepTransferBytes TransferBytesPerStep(const engine::Graph& graph, int shards);
inline double TransferSeconds(int64_t bytes) {
  return static_cast<double>(bytes) / kHostLinkBytesPerSecond;
}

}  // namespace tpuemu::service
