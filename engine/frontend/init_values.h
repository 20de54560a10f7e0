// The values of an Init spec (engine/frontend/ir.h): a constant's or an unfed parameter's,
// deterministic per seed on every machine (splitmix64, Box-Muller). The HLO path feeds them to a
// lowered graph (engine/frontend/init_cache.h keeps them once per process); GET …/jobs/J/hlo
// returns them as params.
#pragma once

#include "base/status.h"
#include "engine/frontend/ir.h"
#include "engine/runtime/cancel.h"
#include "engine/runtime/tensor.h"

namespace tpuemu::engine {

// Values of a constant or an unfed parameter from its Init (deterministic per seed).
// INVALID_ARGUMENT if init.kind is kNone. A random init (a Box-Muller draw per pair of elements:
// ~0.3 s for 16.7 M) polls `cancel` every 64 K elements and returns its CANCELLED /
// DEADLINE_EXCEEDED status once it stops (`out` then holds partial values).
Status MaterializeInit(const Init& init, Tensor& out, const CancelToken& cancel = {});

}  // namespace tpuemu::engine
