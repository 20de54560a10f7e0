// The recursive-descent parser behind parser.h, split over parser.cpp (module, computations,
// instructions, operands, shapes), parser_attributes.cpp (instruction attributes) and
// parser_literal.cpp (constant literals). Internal to engine/hlo; one Parser per Parse call.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "engine/hlo/lexer.h"
#include "engine/hlo/limits.h"
#include "engine/hlo/module.h"

namespace tpuemu::engine::hlo::internal {

class Parser {
 public:
  Parser(std::string_view text, const Limits& limits) : lexer_(text), limits_(limits) {}
  Result<Module> Run();

 private:
  struct Scope {  // the computation being parsed
    Computation* computation;
    std::unordered_map<std::string_view, int> names;
    int root = -1;
  };

  // Errors at the current token ("expected X, found Y") or at a given position.
  Status Expected(const std::string& what) const;
  Status ErrorAt(int line, int column, const std::string& message) const;
  Status ErrorHere(const std::string& message) const;
  std::string Found() const;

  Status Expect(Tok kind, const std::string& what);
  bool EatIf(Tok kind);
  bool AtIdent(std::string_view text) const;
  Status Enter();  // nesting depth guard; pair with --depth_
  Status Int(int64_t& out, const std::string& what);
  Status Bool(bool& out);
  Status IntList(Tok open, Tok close, Tok sep, std::vector<int64_t>& out, const std::string& what);

  // parser.cpp
  Status ParseHeader();
  Status ParseStackFrameTables();
  Status ParseComputation(bool allow_entry, int* index_out, const std::string& inline_name);
  Status ParseInstruction(Scope& scope);
  Status ParseInstructionRhs(Scope& scope, Instruction& inst, bool allow_attributes);
  Status ParseOperands(Scope& scope, Instruction& inst);
  Status ParseShape(Shape& shape);
  Status ParseLayout(Shape& shape);
  bool CanBeShape();
  Status CountInstruction();
  Status WrapAsync(Scope& scope, Instruction& inst);

  // parser_attributes.cpp
  Status ParseAttributes(Instruction& inst);
  Status ParseAttribute(Instruction& inst, std::string_view name);
  Status ParseComputationRef(int& out);
  Status ParseComputationList(std::vector<int>& out);
  Status ParseWindow(std::vector<WindowDim>& window);
  Status ParseDimLabels(ConvDims& dims);
  Status ParseSliceRanges(Attributes& a);
  Status ParsePadding(std::vector<PadDim>& padding);
  Status ParseReplicaGroups(std::vector<std::vector<int64_t>>& groups);
  Status ParseMetadata(Instruction& inst);
  Status ParsePrecisionList(DotPrecision& out);
  Status SkipSubValue();  // one token, or a balanced {...}

  // parser_literal.cpp
  Status ParseLiteral(const Shape& shape, std::shared_ptr<const Value>& out);
  Status ParseLiteralValue(const Shape& shape, Value& out);
  Status ParseDense(const Shape& shape, Array& array, int level, int64_t& next);
  Status ParseElement(const Shape& shape, Array& array, int64_t k);

  Lexer lexer_;
  Limits limits_;
  Module module_;
  int depth_ = 0;
  int anon_ = 0;
  int64_t instructions_ = 0;
  std::unordered_map<std::string, int> computation_index_;
};

}  // namespace tpuemu::engine::hlo::internal
