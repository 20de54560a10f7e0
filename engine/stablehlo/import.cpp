#include "engine/stablehlo/import.h"

#include "engine/hlo/parser.h"
#include "engine/stablehlo/lower.h"
#include "engine/stablehlo/parser.h"

namespace tpuemu::engine::stablehlo {

bool IsStableHloText(std::string_view text) {
  size_t p = 0;
  while (p < text.size()) {
    const char c = text[p];
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
      ++p;
    } else if (text.substr(p, 2) == "//" || c == '#') {  // comments, #loc = ... aliases
      const size_t end = text.find('\n', p);
      p = end == std::string_view::npos ? text.size() : end + 1;
    } else {
      break;
    }
  }
  const std::string_view rest = text.substr(p);
  for (std::string_view word : {"module", "builtin.module", "func.func"}) {
    if (rest.substr(0, word.size()) == word &&
        (rest.size() == word.size() || rest[word.size()] == ' ' || rest[word.size()] == '{' ||
         rest[word.size()] == '\n' || rest[word.size()] == '@')) {
      return true;
    }
  }
  return false;
}

Result<hlo::Module> ParseStableHlo(std::string_view text, const hlo::Limits& limits) {
  Result<ModuleAst> ast = ParseText(text, limits);
  if (!ast.ok()) return ast.status();
  LowerOptions options;
  options.limits = limits;
  Result<Lowered> lowered = Lower(*ast, options);
  if (!lowered.ok()) return lowered.status();
  return std::move(lowered->module);
}

Result<hlo::Module> ParseAnyModule(std::string_view text, const hlo::Limits& limits) {
  if (IsStableHloText(text)) return ParseStableHlo(text, limits);
  return hlo::ParseModule(text, limits);
}

}  // namespace tpuemu::engine::stablehlo
