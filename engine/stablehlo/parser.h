// Parses StableHLO MLIR text (docs/stablehlo.md) into a ModuleAst: `module @name attributes
// {...} { func.func ... }` or bare func.func definitions, each op in its pretty form
// (`stablehlo.add %a, %b : tensor<4xf32>`) or its generic form (`"stablehlo.add"(%a, %b) :
// (...) -> ...`, with `<{properties}>`, `({regions})` and `{attributes}`); `loc(...)` and
// `#alias = ...` lines are skipped.
//
// Errors: INVALID_ARGUMENT "StableHLO text line L, column C: expected X, found Y" for syntax,
// the same prefix naming what is refused (dynamic dimensions `?`, quantized and other types
// the HLO stack has no counterpart for), and the limit when the text exceeds limits.max_text_bytes.
// Pure function: thread-safe.
#pragma once

#include <string_view>

#include "base/status.h"
#include "engine/hlo/limits.h"
#include "engine/stablehlo/ast.h"

namespace tpuemu::engine::stablehlo {

Result<ModuleAst> ParseText(std::string_view text, const hlo::Limits& limits = {});

}  // namespace tpuemu::engine::stablehlo
