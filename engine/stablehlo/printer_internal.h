// The StableHLO printer's class, shared by printer.cpp (module, functions, value names, control
// flow and regions) and printer_ops.cpp (each instruction's op and attributes, dense literals).
// Not part of the engine's interface.
#pragma once

#include <deque>
#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "engine/hlo/module.h"

namespace tpuemu::engine::stablehlo::internal {

// printer_attrs.cpp: the attribute texts of the printed ops.
std::string I64s(const std::vector<int64_t>& v);      // "1, 2, 3"
std::string I64Array(const std::vector<int64_t>& v);  // "array<i64: 1, 2, 3>"
std::string I64Matrix(const std::vector<std::vector<int64_t>>& rows, int64_t fill = -1);
std::string IntAttr(int64_t v, const char* type = "i64");
std::string Quoted(const std::string& text);
std::string_view ChloName(hlo::Opcode op);
std::string_view DirectionWord(hlo::Direction d);
std::string ConvLabels(char a, int64_t pa, char b, int64_t pb, const std::vector<int64_t>& spatial);
void WindowAttrs(const std::vector<hlo::WindowDim>& w, const char* lhs, const char* rhs,
                 std::vector<std::string>& attrs);
void CollectiveAttrs(const hlo::Attributes& a, std::vector<std::string>& attrs);
std::string PrecisionConfig(hlo::DotPrecision p);

// How an HLO value is named in the text: an array (or a tuple built whole) by `whole`, a tuple
// whose elements are known by `parts` (one name per element, "" for one not yet named). A tuple
// has whichever of the two the text has made so far; the other is made on first need.
struct PrintedValue {
  std::string whole;
  std::vector<std::string> parts;
};

// One computation's body being printed: its values so far, and where its lines go.
struct Body {
  const hlo::Computation* comp = nullptr;
  std::vector<PrintedValue> values;  // by instruction position
  std::string* out = nullptr;
  int indent = 4;
};

class Printer {
 public:
  explicit Printer(const hlo::Module& module) : module_(module) {}
  Result<std::string> Run();

  // printer.cpp
  // Prints computation `comp` into `out` with its parameters bound to `params` (by parameter
  // number) and returns the root's value.
  Result<PrintedValue> PrintBody(int comp, const std::vector<PrintedValue>& params,
                                 std::string* out, int indent);
  // "%4: tensor<f32>, ...": a fresh name per parameter of `c`, bound in `params`.
  Result<std::string> Arguments(const hlo::Computation& c, std::vector<PrintedValue>& params);
  // `^bb0(%a: T, ...):` then the body of `comp` with one block argument per parameter, then
  // `stablehlo.return` of the root (a tuple root's elements): a reduce's, sort's, ... region.
  Result<std::string> FlatRegion(int comp, int indent);
  // A region of block arguments `types` that `comp`'s single (tuple) parameter is bound to: a
  // while's cond and body. With `parts`, a tuple root returns its elements.
  Result<std::string> TupleRegion(int comp, const hlo::Shape& tuple, int indent);
  // A region with no arguments whose computation's parameter is the outer value `param`: a
  // conditional's branch.
  Result<std::string> BranchRegion(int comp, const PrintedValue& param, const hlo::Shape& shape,
                                   int indent);
  Status PrintInstruction(Body& body, int i);
  Status PrintWhile(Body& body, int i);
  Status PrintConditional(Body& body, int i);
  Status PrintCall(Body& body, int i);
  // The symbol of the private function printed for `comp` (queued for printing on first use).
  std::string FunctionName(int comp);

  // Names.
  std::string Fresh() { return "%" + std::to_string(next_value_++); }
  void Line(Body& body, const std::string& text) const;
  // The whole value of operand instruction `i` (a stablehlo.tuple of its parts when needed).
  Result<std::string> Whole(Body& body, int i);
  // Element k of tuple instruction `i` (a get_tuple_element of the whole when needed).
  Result<std::string> Part(Body& body, int i, size_t k);
  // Every element of tuple `i`, or `i` itself as the one element of an array value.
  Result<std::vector<std::string>> Elements(Body& body, int i);
  // Defines the results of instruction `i`: one name for an array result (or n == 1), else n
  // results `%N:n` as the parts of the tuple. Returns the left-hand side ("%4", "%4:2").
  std::string DefineResults(Body& body, int i, size_t n);

  // printer_ops.cpp
  // The instruction as one op whose operands are its operands' whole values (everything but
  // parameters, tuples, get-tuple-element and control flow).
  Status PrintOp(Body& body, int i);

  const hlo::Module& module_;
  int64_t next_value_ = 0;
  std::map<int, std::string> functions_;  // computation -> symbol, printed or queued
  std::deque<int> function_queue_;
  std::map<std::string, int> symbols_;  // taken symbols
};

// items joined by sep.
std::string JoinText(const std::vector<std::string>& items, const char* sep = ", ");
// A computation's name as an MLIR symbol (letters, digits, '_', '.', '$').
std::string SymbolName(const std::string& name);
// The results of an instruction in the text: its tuple's elements, or one value.
size_t ResultCount(const hlo::Instruction& inst);
// "(T0, T1) -> (R0, R1)" for the generic syntax.
Result<std::string> FunctionType(const std::vector<hlo::Shape>& operands,
                                 const std::vector<hlo::Shape>& results);
// A float that reads back as the same f32, always lexed as a float ("1.0", "0.1", "3e+38").
std::string FloatText(float x);
// A constant's literal, `dense<...>`, that parses back to the same bits.
Result<std::string> DenseText(const hlo::Instruction& inst);

}  // namespace tpuemu::engine::stablehlo::internal
