// Operand preparation for engine/kernels/gemm.cpp (internal to the engine): the bf16 planes a
// GEMM's passes read — RNE-rounded operands for DEFAULT, XLA's Split2 (hi, lo) for HIGH and Split3
// (hi, mid, lo) for HIGHEST, the raw f32 operand for F32 — as f32 values (Eigen, oneDNN f32) or
// bf16 bits (oneDNN bf16). The planes keep the operand's layout, or transpose it on request; the
// conversion runs in parallel chunks on the context and stops with its token. PrepareBlock rounds
// one tile's block of an operand on the calling thread.
// Storage: buffers of the calling thread (thread_local, one set of slots per thread) reused
// across calls, because first-touching fresh pages costs more than the split itself (4096³
// HIGHEST: 3.1 s per call with 200 MB of fresh planes, 2.5 s with reused ones). TrimScratch drops
// them once they exceed 256 MB, which bounds what each thread pins. Planes stay valid until the
// same thread prepares into the same slots again or trims.
#pragma once

#include <cstdint>

#include "engine/hardware/numerics.h"
#include "engine/runtime/parallel.h"

namespace tpuemu::engine {

struct OperandPlanes {
  // Split3: hi, mid, lo; Split2: hi, lo; otherwise the single plane.
  const void* plane[3] = {nullptr, nullptr, nullptr};
  int count = 0;
};

// `items` packed [rows, cols] matrices; with `transpose`, the data holds each as [cols, rows]
// and the planes get it as [rows, cols].
struct OperandLayout {
  int64_t items = 1, rows = 0, cols = 0;
  bool transpose = false;
};

// Fills `out` with the planes of the operand at `data` for `precision`; bf16_planes selects
// bf16 bits over f32 values (never with kF32). Without a transpose, F32's plane — and DEFAULT's
// f32 plane when bf16_valued (the values are bf16 already) — is `data` itself. Scratch slots
// [first_slot, first_slot + 3) of this thread hold the planes. Returns false when ctx.cancel
// stopped the conversion.
bool PrepareOperand(const float* data, const OperandLayout& layout, bool bf16_valued,
                    Precision precision, bool bf16_planes, int first_slot,
                    const ParallelContext& ctx, OperandPlanes* out);

// The block of an operand that one GEMM tile alone reads, rounded on the calling thread into its
// slots [first_slot, first_slot + 3) as one dense matrix: `runs` runs of `len` values, run r
// starting at data + r · stride, packed one after the other. Rounding a block on the core that
// then reads it is what keeps a two-thread GEMM from reading half its operand out of the other
// core's cache (engine/kernels/gemm.cpp).
void PrepareBlock(const float* data, int64_t runs, int64_t len, int64_t stride, Precision precision,
                  bool bf16_planes, int first_slot, OperandPlanes* out);

// Releases this thread's planes if they hold more than 256 MB.
void TrimScratch();

}  // namespace tpuemu::engine
