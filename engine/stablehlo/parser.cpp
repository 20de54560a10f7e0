#include "engine/stablehlo/parser.h"

#include "engine/stablehlo/parser_internal.h"

namespace tpuemu::engine::stablehlo {

const Attr* Attr::Field(std::string_view name) const {
  for (const auto& [k, v] : fields) {
    if (k == name) return &v;
  }
  return nullptr;
}

const Attr* Op::Find(std::string_view attr) const {
  for (const auto& [k, v] : attrs) {
    if (k == attr) return &v;
  }
  return nullptr;
}

std::string Op::Describe() const {
  return name + " at line " + std::to_string(line) + ", column " + std::to_string(column);
}

const Func* ModuleAst::FindFunc(std::string_view name) const {
  for (const Func& f : funcs) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

Result<ModuleAst> ParseText(std::string_view text, const hlo::Limits& limits) {
  if (static_cast<int64_t>(text.size()) > limits.max_text_bytes) {
    return Status::InvalidArgument(
        "StableHLO text is " + std::to_string(text.size()) +
        " bytes, above the limit max_text_bytes = " + std::to_string(limits.max_text_bytes));
  }
  internal::Parser parser(text, limits);
  return parser.Run();
}

namespace internal {

Status Parser::ErrorAt(int line, int column, const std::string& message) const {
  return Status::InvalidArgument("StableHLO text line " + std::to_string(line) + ", column " +
                                 std::to_string(column) + ": " + message);
}

Status Parser::ErrorHere(const std::string& message) const {
  return ErrorAt(lexer_.token().line, lexer_.token().column, message);
}

Status Parser::Expected(const std::string& what) const {
  const Token& t = lexer_.token();
  std::string found = TokName(t.kind);
  if (t.kind != Tok::kEof && t.kind != Tok::kError && !t.text.empty()) {
    found += " '" + std::string(t.text.substr(0, 40)) + "'";
  }
  return ErrorHere("expected " + what + ", found " + found);
}

Status Parser::Expect(Tok kind, const std::string& what) {
  if (lexer_.kind() != kind) return Expected(what);
  lexer_.Lex();
  return Status::Ok();
}

bool Parser::EatIf(Tok kind) {
  if (lexer_.kind() != kind) return false;
  lexer_.Lex();
  return true;
}

Status Parser::Enter() {
  if (++depth_ > limits_.max_nesting_depth) {
    return ErrorHere("nesting deeper than the limit max_nesting_depth = " +
                     std::to_string(limits_.max_nesting_depth));
  }
  return Status::Ok();
}

ValueRef Parser::MakeRef(const Token& t) const {
  ValueRef ref;
  ref.key = std::string(t.text);
  if (t.result_index >= 0) ref.key += "#" + std::to_string(t.result_index);
  ref.line = t.line;
  ref.column = t.column;
  return ref;
}

Status Parser::SkipLoc() {
  if (AtIdent("loc") && lexer_.PeekChar() == '(') {
    lexer_.Lex();
    return SkipBalanced();
  }
  return Status::Ok();
}

Result<ModuleAst> Parser::Run() {
  ModuleAst module;
  lexer_.Lex();
  // `#alias = value` lines (locations, attribute aliases) before the module.
  auto skip_aliases = [&]() -> Status {
    while (lexer_.kind() == Tok::kHash || lexer_.kind() == Tok::kBang) {
      lexer_.Lex();
      TPUEMU_RETURN_IF_ERROR(Expect(Tok::kEqual, "'=' after an alias name"));
      Attr ignored;
      TPUEMU_RETURN_IF_ERROR(ParseAttr(ignored));
    }
    return Status::Ok();
  };
  TPUEMU_RETURN_IF_ERROR(skip_aliases());
  const bool wrapped = AtIdent("module") || AtIdent("builtin.module");
  if (wrapped) {
    lexer_.Lex();
    if (lexer_.kind() == Tok::kSymbol) {
      module.name = std::string(lexer_.token().text);
      lexer_.Lex();
    }
    if (AtIdent("attributes")) {
      lexer_.Lex();
      TPUEMU_RETURN_IF_ERROR(Expect(Tok::kLbrace, "'{' to start the module attributes"));
      TPUEMU_RETURN_IF_ERROR(ParseDict(module.attrs, Tok::kRbrace));
    }
    TPUEMU_RETURN_IF_ERROR(Expect(Tok::kLbrace, "'{' to start the module body"));
  }
  while (true) {
    TPUEMU_RETURN_IF_ERROR(skip_aliases());
    if (wrapped && lexer_.kind() == Tok::kRbrace) {
      lexer_.Lex();
      TPUEMU_RETURN_IF_ERROR(SkipLoc());
      break;
    }
    if (!wrapped && lexer_.kind() == Tok::kEof) break;
    if (AtIdent("func.func") || AtIdent("func")) {
      TPUEMU_RETURN_IF_ERROR(ParseFunc(module));
      continue;
    }
    return Expected(wrapped ? "func.func or '}' to end the module" : "func.func");
  }
  TPUEMU_RETURN_IF_ERROR(skip_aliases());
  if (lexer_.kind() != Tok::kEof) return Expected("the end of the text after the module");
  if (module.funcs.empty()) return ErrorHere("the module has no func.func");
  return module;
}

Status Parser::ParseFunc(ModuleAst& module) {
  Func f;
  f.line = lexer_.token().line;
  f.column = lexer_.token().column;
  lexer_.Lex();
  if (AtIdent("public") || AtIdent("private") || AtIdent("nested")) {
    f.is_public = lexer_.token().text == "public";
    lexer_.Lex();
  }
  if (lexer_.kind() != Tok::kSymbol) return Expected("the function's @name");
  f.name = std::string(lexer_.token().text);
  if (module.FindFunc(f.name) != nullptr) {
    return ErrorHere("function @" + f.name + " is defined twice");
  }
  lexer_.Lex();
  TPUEMU_RETURN_IF_ERROR(Expect(Tok::kLparen, "'(' to start the arguments"));
  while (lexer_.kind() != Tok::kRparen) {
    if (!f.args.empty()) TPUEMU_RETURN_IF_ERROR(Expect(Tok::kComma, "',' between arguments"));
    FuncArg arg;
    if (lexer_.kind() != Tok::kValue) return Expected("an argument %name");
    arg.name = std::string(lexer_.token().text);
    lexer_.Lex();
    TPUEMU_RETURN_IF_ERROR(Expect(Tok::kColon, "':' before the argument's type"));
    TPUEMU_RETURN_IF_ERROR(ParseType(arg.type));
    if (EatIf(Tok::kLbrace)) TPUEMU_RETURN_IF_ERROR(ParseDict(arg.attrs, Tok::kRbrace));
    TPUEMU_RETURN_IF_ERROR(SkipLoc());
    f.args.push_back(std::move(arg));
  }
  lexer_.Lex();
  if (EatIf(Tok::kArrow)) {
    auto one = [&](bool attrs) -> Status {
      hlo::Shape t;
      TPUEMU_RETURN_IF_ERROR(ParseType(t));
      f.result_types.push_back(std::move(t));
      f.result_attrs.emplace_back();
      if (attrs && EatIf(Tok::kLbrace)) {
        TPUEMU_RETURN_IF_ERROR(ParseDict(f.result_attrs.back(), Tok::kRbrace));
      }
      return SkipLoc();
    };
    if (EatIf(Tok::kLparen)) {
      while (lexer_.kind() != Tok::kRparen) {
        if (!f.result_types.empty())
          TPUEMU_RETURN_IF_ERROR(Expect(Tok::kComma, "',' between results"));
        TPUEMU_RETURN_IF_ERROR(one(true));
      }
      lexer_.Lex();
    } else {
      TPUEMU_RETURN_IF_ERROR(one(false));
    }
  }
  if (AtIdent("attributes")) {
    lexer_.Lex();
    std::vector<AttrField> ignored;
    TPUEMU_RETURN_IF_ERROR(Expect(Tok::kLbrace, "'{' to start the function attributes"));
    TPUEMU_RETURN_IF_ERROR(ParseDict(ignored, Tok::kRbrace));
  }
  TPUEMU_RETURN_IF_ERROR(Expect(Tok::kLbrace, "'{' to start the function body"));
  TPUEMU_RETURN_IF_ERROR(ParseRegionBody(f.body, /*braces=*/true));
  TPUEMU_RETURN_IF_ERROR(SkipLoc());
  module.funcs.push_back(std::move(f));
  return Status::Ok();
}

// After '{': [^bb0(args):] ops until '}' (consumed).
Status Parser::ParseRegionBody(Region& region, bool braces) {
  TPUEMU_RETURN_IF_ERROR(Enter());
  if (lexer_.kind() == Tok::kBlock) {
    lexer_.Lex();
    if (EatIf(Tok::kLparen)) {
      TPUEMU_RETURN_IF_ERROR(ParseBlockArgs(region.args));
    }
    TPUEMU_RETURN_IF_ERROR(Expect(Tok::kColon, "':' after the block label"));
  }
  while (lexer_.kind() != Tok::kRbrace) {
    if (lexer_.kind() == Tok::kBlock)
      return ErrorHere("a region with several blocks is not StableHLO");
    if (lexer_.kind() == Tok::kEof) return Expected("'}' to end the region");
    Op op;
    TPUEMU_RETURN_IF_ERROR(ParseOp(op));
    region.ops.push_back(std::move(op));
  }
  if (braces) lexer_.Lex();
  Leave();
  return Status::Ok();
}

// After '(': %name: type (, ...)* ')'.
Status Parser::ParseBlockArgs(std::vector<BlockArg>& args) {
  while (lexer_.kind() != Tok::kRparen) {
    if (!args.empty()) TPUEMU_RETURN_IF_ERROR(Expect(Tok::kComma, "',' between block arguments"));
    if (lexer_.kind() != Tok::kValue) return Expected("a block argument %name");
    BlockArg arg;
    arg.name = std::string(lexer_.token().text);
    lexer_.Lex();
    TPUEMU_RETURN_IF_ERROR(Expect(Tok::kColon, "':' before the block argument's type"));
    TPUEMU_RETURN_IF_ERROR(ParseType(arg.type));
    TPUEMU_RETURN_IF_ERROR(SkipLoc());
    args.push_back(std::move(arg));
  }
  lexer_.Lex();
  return Status::Ok();
}

Status Parser::ParseRegion(Region& region) {
  TPUEMU_RETURN_IF_ERROR(Expect(Tok::kLbrace, "'{' to start a region"));
  return ParseRegionBody(region, true);
}

Status Parser::ParseRegionList(Op& op) {
  TPUEMU_RETURN_IF_ERROR(Expect(Tok::kLparen, "'(' to start the regions"));
  while (lexer_.kind() != Tok::kRparen) {
    if (!op.regions.empty()) TPUEMU_RETURN_IF_ERROR(Expect(Tok::kComma, "',' between regions"));
    op.regions.emplace_back();
    TPUEMU_RETURN_IF_ERROR(ParseRegion(op.regions.back()));
  }
  lexer_.Lex();
  return Status::Ok();
}

Status Parser::ParseOp(Op& op) {
  op.line = lexer_.token().line;
  op.column = lexer_.token().column;
  if (lexer_.kind() == Tok::kValue) {
    while (true) {
      if (lexer_.kind() != Tok::kValue) return Expected("a result %name");
      const std::string name(lexer_.token().text);
      lexer_.Lex();
      if (EatIf(Tok::kColon)) {
        if (lexer_.kind() != Tok::kInt) return Expected("the result count after ':'");
        const int n = std::atoi(std::string(lexer_.token().text).c_str());
        if (n < 0 || n > 100000) return ErrorHere("result count out of range");
        for (int k = 0; k < n; ++k) op.results.push_back(name + "#" + std::to_string(k));
        lexer_.Lex();
      } else {
        op.results.push_back(name);
      }
      if (!EatIf(Tok::kComma)) break;
    }
    TPUEMU_RETURN_IF_ERROR(Expect(Tok::kEqual, "'=' after the results"));
  }
  op.line = lexer_.token().line;
  op.column = lexer_.token().column;
  if (lexer_.kind() == Tok::kString) {
    op.name = Unescape(lexer_.token().text);
    lexer_.Lex();
    TPUEMU_RETURN_IF_ERROR(ParseGenericOp(op));
  } else if (lexer_.kind() == Tok::kIdent) {
    op.name = std::string(lexer_.token().text);
    lexer_.Lex();
    TPUEMU_RETURN_IF_ERROR(ParsePrettyOp(op));
  } else {
    return Expected("an operation");
  }
  return SkipLoc();
}

Status Parser::ParseGenericOp(Op& op) {
  TPUEMU_RETURN_IF_ERROR(Expect(Tok::kLparen, "'(' to start the operands"));
  while (lexer_.kind() != Tok::kRparen) {
    if (!op.operands.empty()) TPUEMU_RETURN_IF_ERROR(Expect(Tok::kComma, "',' between operands"));
    if (lexer_.kind() != Tok::kValue) return Expected("an operand %value");
    op.operands.push_back(MakeRef(lexer_.token()));
    lexer_.Lex();
  }
  lexer_.Lex();
  if (lexer_.kind() == Tok::kLess) {  // <{properties}>
    lexer_.Lex();
    TPUEMU_RETURN_IF_ERROR(Expect(Tok::kLbrace, "'{' after '<' to start the properties"));
    TPUEMU_RETURN_IF_ERROR(ParseDict(op.attrs, Tok::kRbrace));
    TPUEMU_RETURN_IF_ERROR(Expect(Tok::kGreater, "'>' to end the properties"));
  }
  if (lexer_.kind() == Tok::kLparen) TPUEMU_RETURN_IF_ERROR(ParseRegionList(op));
  if (EatIf(Tok::kLbrace)) TPUEMU_RETURN_IF_ERROR(ParseDict(op.attrs, Tok::kRbrace));
  TPUEMU_RETURN_IF_ERROR(Expect(Tok::kColon, "':' before the operation's type"));
  return ParseFunctionType(op);
}

Status Parser::ParseFunctionType(Op& op) {
  TPUEMU_RETURN_IF_ERROR(Expect(Tok::kLparen, "'(' to start the operand types"));
  while (lexer_.kind() != Tok::kRparen) {
    if (!op.operand_types.empty()) TPUEMU_RETURN_IF_ERROR(Expect(Tok::kComma, "',' between types"));
    op.operand_types.emplace_back();
    TPUEMU_RETURN_IF_ERROR(ParseType(op.operand_types.back()));
  }
  lexer_.Lex();
  TPUEMU_RETURN_IF_ERROR(Expect(Tok::kArrow, "'->' before the result types"));
  if (EatIf(Tok::kLparen)) {
    while (lexer_.kind() != Tok::kRparen) {
      if (!op.result_types.empty())
        TPUEMU_RETURN_IF_ERROR(Expect(Tok::kComma, "',' between types"));
      op.result_types.emplace_back();
      TPUEMU_RETURN_IF_ERROR(ParseType(op.result_types.back()));
    }
    lexer_.Lex();
  } else {
    op.result_types.emplace_back();
    TPUEMU_RETURN_IF_ERROR(ParseType(op.result_types.back()));
  }
  if (op.result_types.size() != op.results.size()) {
    return ErrorAt(op.line, op.column,
                   op.name + " names " + std::to_string(op.results.size()) +
                       " results but its type has " + std::to_string(op.result_types.size()));
  }
  return Status::Ok();
}

// After ':' of a pretty op: a function type, or a list of types (the result types, or for an op
// with one result the operand types with the result's last: `select`'s `i1 type, value type`).
Status Parser::ParseTypeSignature(Op& op) {
  if (lexer_.kind() == Tok::kLparen) return ParseFunctionType(op);
  std::vector<hlo::Shape> list;
  do {
    list.emplace_back();
    TPUEMU_RETURN_IF_ERROR(ParseType(list.back()));
  } while (EatIf(Tok::kComma));
  if (list.size() == op.results.size()) {
    op.result_types = list;
    if (op.results.size() == 1) op.operand_types = list;  // same operand and result type
  } else if (op.results.size() == 1) {
    op.result_types = {list.back()};
    op.operand_types = std::move(list);
  } else if (op.results.empty()) {
    op.operand_types = std::move(list);
  } else {
    return ErrorAt(op.line, op.column,
                   op.name + " names " + std::to_string(op.results.size()) +
                       " results but its type lists " + std::to_string(list.size()));
  }
  return Status::Ok();
}

}  // namespace internal
}  // namespace tpuemu::engine::stablehlo
