// PrintStableHlo: an HLO module as StableHLO MLIR text, the form JAX prints
// (docs/stablehlo.md), which ParseStableHlo (import.h) reads back into a module that evaluates
// identically: `module @name attributes {mhlo.num_partitions, mhlo.num_replicas}` around a
// `func.func public @main` of the entry's parameters and results (a ROOT tuple's elements are
// the results), one op per HLO instruction (elementwise ops of one type in the pretty syntax,
// the rest in the generic `"stablehlo.op"(...) <{...}> ({regions}) : (...) -> ...`), the
// computations reduce, sort, scatter, map, reduce_window, select_and_scatter, while,
// conditional and the reducing collectives call printed inline as their regions, and the
// computations call and fusion call as `func.func private` functions reached by `func.call`.
// Constants are dense literals that read back bit for bit (non-splat arrays above 256 elements
// as hex blobs).
//
// What StableHLO cannot say is changed in ways that keep every value: a copy prints as a
// reshape to its own type, a bitcast between default layouts as a reshape (a change of element
// type as bitcast_convert), a fusion as a call, add-dependency as its operand; tuple values a
// region or function needs whole are rebuilt with stablehlo.tuple. Layouts, instruction names,
// metadata and a while's known_trip_count are not printed. Constants of element types the
// evaluator does not hold (f64, complex, f8, sub-byte) print as zeros, as those values are not
// kept by the parsers either.
//
// Errors: INVALID_ARGUMENT naming the instruction for what has no StableHLO form the front end
// reads back (async and host-transfer ops, fft, cholesky, triangular-solve, an elided constant
// `{...}` whose values are not in the module, a bitcast across layouts, a dot with sparsity or
// the f32 algorithm, a topk of the smallest, custom-calls with called computations, ...).
// Pure function: thread-safe.
#pragma once

#include <string>

#include "base/status.h"
#include "engine/hlo/module.h"

namespace tpuemu::engine::stablehlo {

Result<std::string> PrintStableHlo(const hlo::Module& module);

// "tensor<2x3xf32>", "tensor<i1>", "tuple<tensor<f32>, !stablehlo.token>": an HLO shape as a
// StableHLO type (signed sN as signless iN, uN as uiN, pred as i1). INVALID_ARGUMENT for
// element types StableHLO has no name for (s1, u1, opaque).
Result<std::string> TypeText(const hlo::Shape& shape);

}  // namespace tpuemu::engine::stablehlo
