// Values for the entry parameters of a module, per device (docs/hlo.md, "Parameters").
//
// Per parameter, first match wins:
//  1. values[N]: row-major values for array parameter N (a single value fills the array),
//     rounded/saturated to its element type;
//  2. npy_dir/N.device<D>.npy, then npy_dir/N.npy (tuple parameters: N.<leaf>.npy per leaf in
//     flattened order), read with ReadNpy (npy.h);
//  3. the seed: FillDeterministic(seed, stream) with stream = 0x5eed0000 + 4096*N + leaf —
//     floats uniform in [-1, 1), integers in [0, 8), pred 0/1 — the same on every device unless
//     distinct_per_device (then the device number joins the stream).
// Errors: INVALID_ARGUMENT naming the parameter (values for a tuple parameter, a wrong value
// count, a value key that is no parameter, a bad .npy file, an array above
// limits.max_tensor_elements). Reads files, keeps no state; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "engine/hlo/array.h"
#include "engine/hlo/limits.h"
#include "engine/hlo/module.h"

namespace tpuemu::engine::hlo {

struct InputOptions {
  uint64_t seed = 0;
  bool distinct_per_device = false;
  std::map<int64_t, std::vector<double>> values;
  std::string npy_dir;
};

// args[device][parameter] for module.devices() devices.
Result<std::vector<std::vector<Value>>> MakeArguments(const Module& module,
                                                      const InputOptions& options,
                                                      const Limits& limits = {});

}  // namespace tpuemu::engine::hlo
