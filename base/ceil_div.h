// ⌈a / b⌉ for integers: how many chunks (or tiles, or folds) of b cover a. Used by the chip model
// (engine/chip/timing.cpp) and the runtime's chunking (engine/runtime/parallel.h) alike.
#pragma once

#include <cstdint>

namespace tpuemu {

// ⌈a / b⌉ for a >= 0, b > 0.
inline constexpr int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace tpuemu
