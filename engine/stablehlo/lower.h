// Lowers a parsed StableHLO module (parser.h) to an HLO module (engine/hlo/module.h), as XLA
// converts StableHLO to HLO before compiling: each op to its HLO instruction(s) through the
// HLO builder (engine/hlo/builder.h), so that every instruction is checked by the verifier's
// shape rules as it is added. The public @main (or the only public function) is the entry;
// functions it calls (func.call, stablehlo.composite's decomposition) become called
// computations, regions become the computations reduce, sort, scatter, while, case, ... call.
// Values a while or case region uses from outside it are passed into it, as XLA does.
// `chlo` ops are decomposed into HLO (lower_chlo.cpp); `check.expect_*` ops are ignored, or
// with checks_as_outputs kept as extra entry outputs for RunChecks (checks.h).
//
// Errors: INVALID_ARGUMENT "StableHLO line L, column C: <op>: what is wrong" naming the op for
// anything unsupported (dynamic ops, quantization, unknown ops) and the verifier's message for a
// shape that does not check. Pure function: thread-safe.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "engine/hlo/limits.h"
#include "engine/hlo/module.h"
#include "engine/stablehlo/ast.h"

namespace tpuemu::engine::stablehlo {

struct LowerOptions {
  bool checks_as_outputs = false;
  hlo::Limits limits;
};

// One check.expect_* op of the entry, kept as two entry outputs (actual, expected).
struct Check {
  std::string kind;  // "eq", "almost_eq", "close", ...
  int line = 0;
  double tolerance = 1e-4;         // almost_eq
  int64_t max_ulp_difference = 0;  // close
  double min_ulp_difference = 0;
};

struct Lowered {
  hlo::Module module;
  int results = 0;            // the entry function's results (the outputs before any check's)
  std::vector<Check> checks;  // with checks_as_outputs: outputs results + 2k and + 2k + 1
};

Result<Lowered> Lower(const ModuleAst& ast, const LowerOptions& options = {});

}  // namespace tpuemu::engine::stablehlo
