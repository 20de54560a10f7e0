// Host memory of a compiled program: an upper bound of what one Execute holds at its peak, from
// the same plan as the HBM figure (the compiler's liveness), so a caller knows it before running.
//
// The sweep differs from HBM accounting in three ways:
//  * every element takes 4 bytes on the host (bf16 values are kept as f32: engine/tensor.h);
//  * tensors are not sharded: the host runs the whole program whatever options.tensorcores;
//  * at each op the kernel's transient scratch is added while it runs: a matmul op's operand
//    planes (engine/gemm_operands.h: 1 per operand for DEFAULT and F32 — rounded or transposed
//    copies —, 2 for HIGH, 3 for HIGHEST; counted at 4 bytes a value), a convolution's im2col
//    matrix, a general reduce's f64 accumulators.
// Parameters and constants count for the whole program, fed or not (a caller's feeds live as long
// as the execution); an output that is a parameter adds its copy at the end. In-place elementwise
// ops and reshapes that steal their input make the real figure lower, never higher.
// Not counted — per process, not per program (README "Host memory"): BufferCache's free buffers
// (512 MiB), InitCache (256 MiB), the operand planes a thread keeps between GEMMs (up to 256 MiB
// per thread) and oneDNN's primitive cache.
// Pure functions: thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/ir.h"
#include "engine/numerics.h"

namespace tpuemu::engine {

struct OpPlan;

// Bytes a tensor of `shape` takes on the host (4 per element whatever the dtype).
int64_t HostTensorBytes(const Shape& shape);

// Transient bytes op `op`'s kernel allocates while it runs (0 for most vector ops).
int64_t HostScratchBytes(const Op& op, const Graph& graph, const OpPlan& plan, Precision precision);

// Peak host bytes of executing `graph` with `plans` (one per op, last_use set) at `precision`.
int64_t PeakHostBytes(const Graph& graph, const std::vector<OpPlan>& plans, Precision precision);

}  // namespace tpuemu::engine
