// One GEMM pass on one tile: the unit engine/kernels/gemm.cpp hands to a backend (internal to the
// engine; call engine/kernels/gemm.h instead).
//
// For each of `batch` items: c[m x n] (row stride ldc) = a · b, or c += a · b when `accumulate`
// (f32 accumulation either way). An operand's element (i, p) sits at data[i·ld + p], or at
// data[p·ld + i] when `transposed`; item t of an operand starts t·batch_stride elements further
// (0: one matrix shared by every item). Element type: f32, or bf16 bits for the bf16 pass.
// Passes run on the calling thread only and keep no state between calls except caches.
#pragma once

#include <cstdint>

#include "engine/kernels/isa.h"

namespace tpuemu::engine {

struct PassMatrix {
  const void* data = nullptr;
  int64_t ld = 0;
  bool transposed = false;
  int64_t batch_stride = 0;
};

struct PassArgs {
  PassMatrix a, b;
  float* c = nullptr;
  int64_t ldc = 0;
  int64_t c_batch_stride = 0;
  int64_t batch = 1, m = 0, n = 0, k = 0;
  bool accumulate = false;
};

namespace eigen_gemm {

// Eigen's f32 GEMM for the pass (float operands), compiled for `isa` (which the CPU must
// support: engine/kernels/isa.h).
void Pass(const PassArgs& args, Isa isa = HostIsa());

}  // namespace eigen_gemm
}  // namespace tpuemu::engine
