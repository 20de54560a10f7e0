// Host <-> device transfers of a job's step, for TransferToDeviceTime / TransferFromDeviceTime.
//
// What moves: the emulator keeps a job's weights and data on the host and feeds every parameter
// of the program each step (SGD updates weights host-side), then reads every output back. So per
// step: to device = the device bytes (bf16 = 2 bytes/element) of all parameters x shards, from
// device = the bytes of all outputs x shards.
// How fast: the chip model's host link (engine/chip/chip_model.h HostLinkSeconds: the
// generation's link at Efficiency::host, the one offloading in `estimate` and `compare` uses),
// with all of a step's bytes serialised over one chip's link (an upper bound on the time). A job
// whose node is gone is timed on kTransferFallback's link. Pure functions: thread-safe.
#pragma once

#include <cstdint>

#include "engine/chip/chip_model.h"
#include "engine/frontend/ir.h"
#include "engine/hardware/hardware.h"

namespace tpuemu::service {

// The generation whose (typical, host_link.h) link times a job whose node is unknown.
inline constexpr engine::Generation kTransferFallback = engine::Generation::kV5e;

struct StepTransferBytes {
  int64_t to_device = 0;
  int64_t from_device = 0;
};

StepTransferBytes TransferBytesPerStep(const engine::Graph& graph, int shards);
inline double TransferSeconds(engine::Generation generation, int64_t bytes) {
  return engine::HostLinkSeconds(generation, static_cast<double>(bytes));
}

}  // namespace tpuemu::service
