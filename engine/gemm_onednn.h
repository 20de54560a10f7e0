// oneDNN matmul passes for engine/gemm.cpp (internal to the engine; call engine/gemm.h instead).
//
// Built with real kernels when TPUEMU_HAVE_ONEDNN is defined, else every function reports
// "unavailable". Primitives are cached per (m, n, k, dtype, accumulate) in a process-wide map of
// bounded size (least recently used entry evicted), guarded by a mutex; executing a cached
// primitive does not hold the mutex. Scratchpads are per thread (user scratchpad mode, a
// thread_local buffer released when it exceeds 256 MB), so one primitive may run on several
// threads at once. The first call on each thread limits that
// thread's OpenMP team to one thread (Debian's libdnnl uses the GNU OpenMP runtime).
// Functions return false when oneDNN is absent or raised an error; the caller then falls back to
// Eigen. They never throw.
#pragma once

#include <cstddef>
#include <cstdint>

#include "engine/numerics.h"

namespace tpuemu::engine::onednn {

// Compiled with oneDNN and the effective CPU ISA has AVX512-BF16 or AMX.
bool Available();

// c[m x n] = a[m x k]·b[k x n] (accumulate = false) or c += a·b (accumulate = true, as a sum
// post-op: c = c + dot in f32). Row-major; bf16 inputs, f32 output and accumulation.
bool Bf16Pass(const Bf16Bits* a, const Bf16Bits* b, float* c, int64_t m, int64_t n, int64_t k,
              bool accumulate);

// c = a·b in plain f32.
bool F32Gemm(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k);

// Primitives currently cached (for tests of the cache).
std::size_t CachedPrimitives();

}  // namespace tpuemu::engine::onednn
