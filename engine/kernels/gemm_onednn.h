// oneDNN matmul passes for engine/kernels/gemm.cpp (internal to the engine; call
// engine/kernels/gemm.h instead).
//
// Built with real kernels when TPUEMU_HAVE_ONEDNN is defined, else every function reports
// "unavailable". One matmul primitive per (dtype, shape, strides, transposes, accumulate) — the
// tiles of engine/kernels/gemm.cpp repeat a handful of shapes per op — in a process-wide cache of
// bounded size (least recently used entry evicted), guarded by a mutex; executing a cached
// primitive does not hold the mutex. Scratchpads are per thread (user scratchpad mode, a
// thread_local buffer released when it exceeds 256 MB), so one primitive may run on several threads
// at once. The first call on each thread limits that thread's OpenMP team to one thread (Debian's
// libdnnl uses the GNU OpenMP runtime): the engine's pool is the only source of parallelism.
// Functions return false when oneDNN is absent or raised an error; the caller then falls back to
// Eigen. They never throw.
#pragma once

#include <cstddef>
#include <string>

#include "engine/kernels/gemm_pass.h"

namespace tpuemu::engine::onednn {

// Compiled with oneDNN and the effective CPU ISA has AVX512-BF16 or AMX.
bool Bf16Available();
// Compiled with oneDNN.
bool F32Available();
// oneDNN's version and the CPU ISA it dispatches to, e.g. "oneDNN 2.6.3, CPU ISA avx2"; empty
// without oneDNN.
std::string Describe();

// The pass of gemm_pass.h with bf16 operands (bf16 = true) or f32 operands, f32 output.
bool Pass(const PassArgs& args, bool bf16);

// Primitives currently cached (for tests of the cache).
std::size_t CachedPrimitives();

}  // namespace tpuemu::engine::onednn
