// mhlo.sharding strings as JAX writes them on a module's arguments (HLO's sharding syntax:
// "{replicated}", "{maximal device=0}", "{devices=[2,1]0,1}", "{devices=[2,1,2]<=[4]
// last_tile_dim_replicate}"), checked against the argument and the module's devices: every
// tiled dimension has as many tiles as the tile assignment says, each divides the dimension
// evenly or not (XLA pads), and every device named is one of the module's. The evaluator runs
// the module's global program on every device, so a sharding changes no value; a sharding that
// cannot hold on the module's devices is refused here rather than ignored.
// Errors: INVALID_ARGUMENT naming what does not fit. Pure function.
#pragma once

#include <cstdint>
#include <string_view>

#include "base/status.h"
#include "engine/hlo/shape.h"

namespace tpuemu::engine::stablehlo {

Status CheckSharding(std::string_view sharding, const hlo::Shape& type, int64_t devices);

}  // namespace tpuemu::engine::stablehlo
