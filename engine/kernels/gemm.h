// Matmul kernels with TPU numerics (the rules and their sources: engine/hardware/numerics.h).
//
// Every backend computes the same numbers up to f32 re-association of the accumulation: operands
// are rounded (DEFAULT) or split (HIGH, HIGHEST) into bf16 values, a bf16·bf16 product is exact
// in f32, and the passes accumulate in f32 in XLA's order. The backend is chosen at run time from
// what the CPU offers (one portable binary):
// - kOneDnn (bf16): oneDNN bf16 x bf16 -> f32 matmul primitives, when oneDNN is built in and the
//   CPU has AVX512-BF16 or AMX;
// - kOneDnnF32: oneDNN's f32 GEMM on the bf16-valued operand planes, when oneDNN is built in (the
//   same products, exact in f32, summed in f32: the same math on any x86-64);
// - kEigen: Eigen's f32 GEMM on the same planes, compiled for several ISAs (AVX-512, AVX2+FMA,
//   baseline) and picked by CPUID; used only without oneDNN, or when forced.
// F32 precision runs a plain f32 GEMM (oneDNN f32 where built, else Eigen).
//
// RunGemm is the engine's entry point: operands are rounded/split once (on the bf16 kernel, each
// of several tiles rounds the blocks only it reads, its items, rows or columns, on its own core),
// and the output is cut into tiles of bounded work that run on the pool (ParallelContext: thread
// cap, fairness group) and check the cancel token between passes, so a stop takes effect within
// a tile's time (< ~100 ms) whatever the matmul size. Matmul is the single-threaded convenience
// form.
//
// Threading: all functions are thread-safe; a call's operand planes live in buffers of the calling
// thread, and a tile's own blocks in those of the thread that ran it, reused across calls
// (released when above 256 MB). Errors: none are reported; a oneDNN failure falls back to Eigen.
// Only std::bad_alloc can escape (callers bound tensor sizes).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "engine/hardware/numerics.h"
#include "engine/runtime/parallel.h"

namespace tpuemu::engine {

enum class GemmBackend { kAuto, kEigen, kOneDnn, kOneDnnF32 };

// One operand of a (batched) GEMM. Logical shape per batch item [rows, cols] (A: [m, k], B:
// [k, n]); stored row-major as [rows, cols], or as [cols, rows] when `transposed`. Batch items
// are packed: item i starts at data + i·rows·cols, unless `shared` (one matrix for every item).
struct GemmOperand {
  const float* data = nullptr;
  bool transposed = false;
  bool shared = false;
  // Every value is already bf16 (a bf16 tensor): DEFAULT's rounding is then the identity and is
  // skipped on the f32 backends.
  bool bf16_valued = false;
};

// C[i] = A[i] · B[i] for i < batch, C packed [batch, m, n] row-major (overwritten; it must not
// alias A or B). k == 0 gives zeros.
struct GemmProblem {
  int64_t batch = 1, m = 0, n = 0, k = 0;
  GemmOperand a, b;
  float* c = nullptr;
};

// The problem at `precision` (kDefault: RNE-round to bf16, exact products, f32 accumulation;
// kHigh: XLA's X3, r = lo·hi + hi·lo, nan_to_zero, r += hi·hi; kHighest: X6, r = mid·mid + hi·lo
// + lo·hi + hi·mid + mid·hi, nan_to_zero, r += hi·hi; kF32: plain f32), tiled over ctx.
// Returns true when complete, false when ctx.cancel stopped it (C then holds partial results).
bool RunGemm(const GemmProblem& problem, Precision precision, const ParallelContext& ctx,
             GemmBackend backend = GemmBackend::kAuto);

// C[m x n] = A[m x k] · B[k x n], row-major, on the calling thread only; see RunGemm.
void Matmul(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k,
            Precision precision, GemmBackend backend = GemmBackend::kAuto);

// Compiled with oneDNN AND the CPU has AVX512-BF16 or AMX (asked once, cached).
bool OneDnnAvailable();
// Compiled with oneDNN (its f32 GEMM runs on any x86-64).
bool OneDnnF32Available();

// What a request runs on here. kAuto consults TPUEMU_GEMM_BACKEND (eigen | onednn_f32 |
// onednn_bf16 | onednn | auto; read once) and then takes the fastest available: kOneDnn, else
// kOneDnnF32, else kEigen. A forced backend the machine cannot run falls back the same way
// (kOneDnn -> kOneDnnF32 -> kEigen); kEigen is always honoured.
GemmBackend ResolveBackend(GemmBackend requested);

std::string_view GemmBackendName(GemmBackend backend);  // "auto", "eigen", "onednn_bf16", ...

// What ResolveBackend(kAuto) runs on, for the startup log and /_emulator/hardware, e.g.
// "onednn_f32 (oneDNN 2.6.3 f32 GEMM on bf16-rounded operands, CPU ISA avx2)" or
// "eigen (avx2+fma)".
std::string GemmKernelName();

}  // namespace tpuemu::engine
