// Peak host memory of running an HLO module with Evaluate (evaluator.h) on all its devices, known
// from the parsed module before anything runs, so a job can be admitted against a host-memory
// budget (service/jobs/host_memory_budget.h) like any other.
//
// A liveness sweep that mirrors the evaluator, not the HBM plan (memory_profile.cpp), because the
// host holds more than a TPU would:
//  * element sizes are the evaluator's (array.h): 4 bytes for every floating type (f16, bf16 and
//    f32 are kept as f32), 8 for pred and every integer type (kept as int64);
//  * every instruction's result is materialised — fused producers and fusion computations
//    included; a value is freed after its last use in its computation, as Evaluate frees it;
//    constants (elided ones are generated once and kept) live for the whole run;
//  * a while, conditional, call, fusion or async-start adds its callees' own peak while it runs;
//  * dot and convolution add their transient buffers: the transposed operand copies, the f32
//    result, the GEMM operand planes (counted as HIGHEST's three per operand, whatever the
//    precision) and a convolution's im2col matrix;
//  * every device holds its own values (the devices run in lockstep), plus its entry parameters
//    for the whole run and its previous step's result.
// Tuples and get-tuple-element share their operands' arrays and add nothing. It is an upper
// bound of what Evaluate allocates for the module's values; per-process caches (README "Host
// memory") are not in it. Pure function: thread-safe.
#pragma once

#include <cstdint>

#include "engine/hlo/module.h"

namespace tpuemu::engine::hlo {

// Bytes the evaluator holds for a value of `shape` (its leaves; 4 or 8 bytes per element).
int64_t HostValueBytes(const Shape& shape);

// Peak host bytes of running `module` once on module.devices() devices (see above).
int64_t PeakHostBytes(const Module& module);

}  // namespace tpuemu::engine::hlo
