// The one entry point for a module's text in either dialect: StableHLO MLIR (`module @m ...`,
// `func.func ...`: parsed by parser.h, lowered by lower.h) or XLA's HLO text (`HloModule ...`:
// engine/hlo/parser.h). tpuemu-engine run/estimate, HLO jobs and POST /_emulator/compare call
// ParseAnyModule, so every path takes both.
//
// Errors: those of the parser and lowering of the dialect detected (INVALID_ARGUMENT with line
// and column). Pure functions: thread-safe.
#pragma once

#include <string_view>

#include "base/status.h"
#include "engine/hlo/limits.h"
#include "engine/hlo/module.h"

namespace tpuemu::engine::stablehlo {

// The text's first word (after blanks, // comments and #alias lines) is `module`,
// `builtin.module` or `func.func`.
bool IsStableHloText(std::string_view text);
// Parse + lower + verify: the module every engine/hlo function expects.
Result<hlo::Module> ParseStableHlo(std::string_view text, const hlo::Limits& limits = {});
// StableHLO when IsStableHloText, else HLO text (hlo::ParseModule).
Result<hlo::Module> ParseAnyModule(std::string_view text, const hlo::Limits& limits = {});

}  // namespace tpuemu::engine::stablehlo
