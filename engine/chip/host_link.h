// The link between a TPU chip and its host's memory, which host offloading (remat policies that
// offload, optimizer-state offload) moves activations and state over. Source: "How to Scale Your
// Model" (jax-ml/scaling-book tpus.md @ 04d8de5): "PCIe bandwidth is typically around 1.5e10
// bytes / second per chip", "Trillium (TPU v6e) has 32GB/s, about 2x higher than v5". No figure
// is published per older generation; they take the typical one. Pure: thread-safe.
#pragma once

#include "engine/hardware/hardware.h"

namespace tpuemu::engine::cost {

// Bytes per second one way between one chip's HBM and host memory.
inline double HostLinkBytesPerSecond(Generation generation) {
  return generation == Generation::kV6e ? 3.2e10 : 1.5e10;
}

}  // namespace tpuemu::engine::cost
