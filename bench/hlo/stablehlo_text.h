// A StableHLO module of at least `min_bytes` as JAX prints an MLP's layers (dot_general,
// broadcast_in_dim, add, tanh, a reduce and a hex-blob constant per layer), for bench_hlo's
// StableHLO parse+lower figure beside HLO text's.
#pragma once

#include <cstddef>
#include <string>

namespace tpuemu::engine::hlo {

std::string StableHloBenchModule(size_t min_bytes);

}  // namespace tpuemu::engine::hlo
