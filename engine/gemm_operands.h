// Operand preparation for engine/gemm.cpp (internal to the engine): the bf16 planes a GEMM's
// passes read — RNE-rounded operands for DEFAULT, XLA's Split2 (hi, lo) for HIGH and Split3
// (hi, mid, lo) for HIGHEST, the raw f32 operand for F32 — as f32 values (Eigen, oneDNN f32) or
// bf16 bits (oneDNN bf16). The planes keep the operand's layout, transpose it, or cut a transposed
// one into dense row blocks (OperandLayout), as asked; the conversion runs in parallel chunks on
// the context and stops with its token.
// Storage: buffers of the calling thread (thread_local, one set of slots per thread) reused
// across calls, because first-touching fresh pages costs more than the split itself (4096³
// HIGHEST: 3.1 s per call with 200 MB of fresh planes, 2.5 s with reused ones). TrimScratch drops
// them once they exceed 256 MB, which bounds what each thread pins. Planes stay valid until the
// same thread prepares into the same slots again or trims.
#pragma once

#include <cstdint>

#include "engine/numerics.h"
#include "engine/parallel.h"

namespace tpuemu::engine {

struct OperandPlanes {
  // Split3: hi, mid, lo; Split2: hi, lo; otherwise the single plane.
  const void* plane[3] = {nullptr, nullptr, nullptr};
  int count = 0;
};

// `items` packed [rows, cols] matrices; with `transpose`, the data holds each as [cols, rows]
// and the planes get it as [rows, cols]. With `row_blocks` > 0 instead (the data transposed, as
// for `transpose`), the planes keep it transposed but cut into blocks of `row_blocks` rows (the
// last may be shorter), each block a dense [cols, block rows] matrix: rows [r0, r0 + w) of an
// item start at r0 · cols, element (r, c) at r0 · cols + c · w + (r - r0). A GEMM tile of those
// rows then reads a dense transposed matrix, which oneDNN's fast bf16 kernels take as it is, and
// making the planes costs contiguous runs only (a transpose of a 1024² operand took 8x longer
// than its rounding).
struct OperandLayout {
  int64_t items = 1, rows = 0, cols = 0;
  bool transpose = false;
  int64_t row_blocks = 0;
};

// Fills `out` with the planes of the operand at `data` for `precision`; bf16_planes selects
// bf16 bits over f32 values (never with kF32). Without a transpose, F32's plane — and DEFAULT's
// f32 plane when bf16_valued (the values are bf16 already) — is `data` itself. Scratch slots
// [first_slot, first_slot + 3) of this thread hold the planes. Returns false when ctx.cancel
// stopped the conversion.
bool PrepareOperand(const float* data, const OperandLayout& layout, bool bf16_valued,
                    Precision precision, bool bf16_planes, int first_slot,
                    const ParallelContext& ctx, OperandPlanes* out);

// Releases this thread's planes if they hold more than 256 MB.
void TrimScratch();

}  // namespace tpuemu::engine
