// Parses HLO text into a Module: the format of HloModule::ToString() as JAX
// (`compiler_ir('hlo').as_hlo_text()`), XLA_FLAGS dumps (before and after optimizations),
// torch_xla and TensorFlow print it. Grammar: xla/hlo/parser/hlo_parser.cc; docs/hlo.md lists
// what is accepted and what is skipped.
//
// Errors: INVALID_ARGUMENT "HLO text line L, column C: expected X, found Y" for syntax errors,
// and the same prefix for unknown names (instructions, computations, opcodes) and literal values
// out of range; INVALID_ARGUMENT naming the limit when the text or the instruction count exceeds
// `limits`. Parse does not check shapes against opcodes: Verify (verifier.h) does, and ParseModule
// runs both. Pure functions: thread-safe.
#pragma once

#include <string_view>

#include "base/status.h"
#include "engine/hlo/limits.h"
#include "engine/hlo/module.h"

namespace tpuemu::engine::hlo {

// Syntax only.
Result<Module> Parse(std::string_view text, const Limits& limits = {});
// Parse, then Verify: the module every other engine/hlo function expects.
Result<Module> ParseModule(std::string_view text, const Limits& limits = {});

}  // namespace tpuemu::engine::hlo
