// The StableHLO parser's class, shared by parser.cpp (module, functions, ops, regions),
// parser_attr.cpp (attribute values, types, dense literals) and parser_pretty.cpp (each op's
// pretty syntax). Not part of the engine's interface.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "engine/hlo/limits.h"
#include "engine/stablehlo/ast.h"
#include "engine/stablehlo/lexer.h"

namespace tpuemu::engine::stablehlo::internal {

class Parser {
 public:
  Parser(std::string_view text, const hlo::Limits& limits) : lexer_(text), limits_(limits) {}
  Result<ModuleAst> Run();

  // parser.cpp
  Status ParseFunc(ModuleAst& module);
  Status ParseRegionBody(Region& region, bool braces);
  Status ParseOp(Op& op);
  Status ParseGenericOp(Op& op);
  Status ParseFunctionType(Op& op);
  Status ParseTypeSignature(Op& op);   // after ':': a function type or a type list
  Status ParseRegionList(Op& op);      // '(' region (',' region)* ')'
  Status ParseRegion(Region& region);  // '{' [^bb(args):] ops '}'
  Status ParseBlockArgs(std::vector<BlockArg>& args);
  Status SkipLoc();

  // parser_attr.cpp
  Status ParseAttr(Attr& out, bool allow_type_suffix = true);
  Status ParseDict(std::vector<AttrField>& out, Tok close);
  Status ParseType(hlo::Shape& out);
  Status ParseTensorBody(std::string_view body, hlo::Shape& out);
  Status ParseDense(Attr& out);
  Status ParseDenseList(DenseLiteral& lit, int level);
  Status ParseDenseElement(DenseLiteral& lit);
  Status ParseConvDims(Attr& out);
  Status SkipBalanced();  // the current '(' '[' '{' or '<' and everything to its match

  // parser_pretty.cpp
  Status ParsePrettyOp(Op& op);
  Status ParsePrettyReduce(Op& op);
  Status ParsePrettyWhile(Op& op);
  Status ParseSliceRanges(Op& op);
  Status ParseKeywordAttr(Op& op, std::string_view keyword);

  // Helpers.
  Status Expect(Tok kind, const std::string& what);
  bool EatIf(Tok kind);
  bool AtIdent(std::string_view word) const {
    return lexer_.kind() == Tok::kIdent && lexer_.token().text == word;
  }
  Status Expected(const std::string& what) const;
  Status ErrorHere(const std::string& message) const;
  Status ErrorAt(int line, int column, const std::string& message) const;
  Status Enter();
  void Leave() { --depth_; }
  ValueRef MakeRef(const Token& t) const;

  Lexer lexer_;
  const hlo::Limits& limits_;
  int depth_ = 0;
  bool in_attr_type_ = false;  // the type after an attribute value: `index` elements allowed
};

// "2x3xf32" / "f32" / "4xcomplex<f32>" element type words.
Result<hlo::PrimitiveType> ElementType(std::string_view word);

}  // namespace tpuemu::engine::stablehlo::internal
