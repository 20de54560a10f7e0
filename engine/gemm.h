// Matmul kernels with TPU numerics (see engine/numerics.h and reference §4).
//
// Two backends compute the same numbers up to f32 re-association of the accumulation:
// - Eigen (always built): bf16 values held in f32, Eigen's f32 GEMM. A bf16·bf16 product is exact
//   in f32, so this is the MXU result up to summation order.
// - oneDNN (built when TPUEMU_HAVE_ONEDNN, used when the CPU has AVX512-BF16 or AMX): bf16
//   src/weights, f32 dst matmul primitives, one primitive execution per MXU pass. Primitives are
//   cached per shape (engine/gemm_onednn.h).
//
// Threading: every call runs on the calling thread only (oneDNN's OpenMP team and Eigen are held
// to one thread); engine::Pool parallelises across shards. All functions are thread-safe.
// Errors: none are reported; a oneDNN failure falls back to the Eigen path. Operand planes and
// the oneDNN scratchpad live in per-thread buffers reused across calls (each kept only while it
// is <= 256 MB), so only std::bad_alloc can escape (callers bound tensor sizes).
#pragma once

#include <cstdint>
#include <string_view>

#include "engine/numerics.h"

namespace tpuemu::engine {

enum class GemmBackend { kAuto, kEigen, kOneDnn };

// C[m x n] = A[m x k] · B[k x n], all row-major f32 buffers (C is overwritten; it must not alias A
// or B), with the TPU numerics of `precision`:
//   kDefault: RNE-round A and B to bf16, exact products, f32 accumulation (1 MXU pass);
//   kHigh:    Split2 both operands, r = lo·hi + hi·lo, nan_to_zero, r += hi·hi (X3);
//   kHighest: Split3 both operands, r = mid·mid + hi·lo + lo·hi + hi·mid + mid·hi, nan_to_zero,
//             r += hi·hi (X6, smallest terms first);
//   kF32:     plain f32 GEMM.
// k == 0 yields C = 0. m, n, k must be >= 0.
void Matmul(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k,
            Precision precision, GemmBackend backend = GemmBackend::kAuto);

// Compiled with oneDNN AND the CPU has AVX512-BF16 or AMX (asked once, cached).
bool OneDnnAvailable();

// What a request runs on here: kOneDnn only when OneDnnAvailable(), else kEigen. kAuto consults
// the environment variable TPUEMU_GEMM_BACKEND (eigen | onednn | auto) first.
GemmBackend ResolveBackend(GemmBackend requested);

std::string_view GemmBackendName(GemmBackend backend);  // "auto", "eigen", "onednn"

}  // namespace tpuemu::engine
