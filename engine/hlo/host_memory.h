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
//  * dot and convolution add their transient buffers: a dot the transposed copy of an operand it
//    cannot read in place and the f32 result of a float dot with an integer result; a
//    convolution its operand and result copies and its im2col matrix; both the GEMM operand
//    planes at their precision (1 per operand element for DEFAULT and F32, 2 for HIGH, 3 for
//    HIGHEST, 4 bytes each);
//  * every device holds its own values (the devices run in lockstep), plus its entry parameters
//    for the whole run and its previous step's result.
// Tuples and get-tuple-element share their operands' arrays and add nothing. It is an upper
// bound of what Evaluate allocates for the module's values; per-process caches (README "Host
// memory") are not in it. Pure function: thread-safe.
#pragma once

#include <cstdint>

#include "engine/hardware/numerics.h"
#include "engine/hlo/module.h"

namespace tpuemu::engine::hlo {

// Bytes the evaluator holds for a value of `shape` (its leaves; 4 or 8 bytes per element).
int64_t HostValueBytes(const Shape& shape);

// Peak host bytes of running `module` once on module.devices() devices (see above), its dots and
// convolutions at `precision` unless they name their own (EvalOptions::precision; HIGHEST, the
// most planes, bounds every run).
int64_t PeakHostBytes(const Module& module, Precision precision = Precision::kHighest);

}  // namespace tpuemu::engine::hlo
