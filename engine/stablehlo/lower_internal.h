// The lowering's class, shared by lower.cpp (functions, regions, control flow), lower_ops.cpp
// (StableHLO ops), lower_attrs.cpp (attribute readers, literals) and lower_chlo.cpp (chlo
// decompositions). Not part of the engine's interface.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "engine/hlo/builder.h"
#include "engine/stablehlo/lower.h"

namespace tpuemu::engine::stablehlo::internal {

// Values of the computation being written: a key (ValueRef::key) -> its position.
using Scope = std::unordered_map<std::string, int>;

class Lowerer {
 public:
  Lowerer(const ModuleAst& ast, const LowerOptions& options);
  Result<Lowered> Run();

  // lower.cpp
  Result<int> CalleeComputation(const std::string& name, const Op& at);
  Status LowerOps(const Region& region, Scope& scope, std::vector<int>* returned,
                  bool entry_checks);
  Status LowerOp(const Op& op, Scope& scope, bool entry_checks);
  // A region as a computation with one parameter per block argument (reduce, sort, ...).
  Result<int> FlatRegion(const Region& region, const Op& op, const std::string& role);
  // A region as a computation of one tuple parameter: its block arguments, then `captures`.
  Result<int> TupleRegion(const Region& region, const std::vector<hlo::Shape>& arg_types,
                          const std::vector<std::string>& captures,
                          const std::vector<hlo::Shape>& capture_types, bool pass_captures,
                          const std::string& role);
  Result<std::vector<int>> LowerWhile(const Op& op, const std::vector<int>& operands, Scope& scope);
  Result<std::vector<int>> LowerCase(const Op& op, const std::vector<int>& operands, Scope& scope);
  Result<std::vector<int>> LowerCall(const Op& op, const std::string& callee,
                                     const std::vector<int>& operands);

  // lower_ops.cpp
  Result<std::vector<int>> LowerStablehlo(const Op& op, const std::vector<int>& operands,
                                          Scope& scope);
  Result<std::vector<int>> LowerCollective(const Op& op, const std::vector<int>& operands);
  Result<std::vector<int>> LowerWindowed(const Op& op, const std::vector<int>& operands);
  // lower_chlo.cpp
  Result<std::vector<int>> LowerChlo(const Op& op, const std::vector<int>& operands);
  // lower_chlo_math.cpp: erfc, erf_inv, lgamma, digamma, bessel_i1e, zeta, polygamma,
  // next_after, conj (`name` without chlo.).
  Result<std::vector<int>> LowerChloMath(const Op& op, const std::string& name,
                                         const std::vector<int>& operands);

  // Builders.
  Result<int> Emit(hlo::Instruction inst, const Op& op);
  hlo::Instruction Make(hlo::Opcode opcode, std::vector<int> operands, hlo::Shape shape) const;
  Result<int> Constant(double value, hlo::PrimitiveType type, const Op& op);
  Result<int> Broadcast(int operand, const hlo::Shape& to, const Op& op);  // a scalar to `to`
  // `position` unpacked into n values: itself when !packed, else its n tuple elements.
  Result<std::vector<int>> Unpack(int position, size_t n, bool packed, const Op& op);
  Result<int> Pack(const std::vector<int>& values, const Op& op);  // tuple (one value: itself)
  const hlo::Shape& ShapeOf(int position) const { return builder_.at(position).shape; }
  Status Error(const Op& op, const std::string& message) const;
  Status Unsupported(const Op& op, const std::string& why = "") const;
  std::string NextName(std::string_view base);

  const ModuleAst& ast_;
  const LowerOptions& options_;
  hlo::ModuleBuilder builder_;
  std::map<std::string, int> funcs_;   // lowered callee name -> computation
  std::set<std::string> in_progress_;  // callees being lowered (recursion check)
  std::vector<Check> checks_;
  std::vector<int> check_outputs_;  // entry positions: actual, expected, ...
  int64_t counter_ = 0;
  int64_t instructions_ = 0;
};

// Values a region uses that it does not define (block arguments and results of its ops and of
// their nested regions), in order of first use.
std::vector<std::string> FreeValues(const Region& region);

// Attribute readers (lower_attrs.cpp). Ints flattens arrays, array<i64: ...> and dense<...>.
Result<std::vector<int64_t>> Ints(const Attr& attr);
Result<std::vector<int64_t>> IntsOf(const Op& op, std::string_view name, bool required = true);
int64_t IntOf(const Op& op, std::string_view name, int64_t fallback);
// The n integers of attribute `name`, or n copies of `fill` when the op has none.
Result<std::vector<int64_t>> SizedInts(const Op& op, std::string_view name, size_t n, int64_t fill);
std::string WordOf(const Op& op, std::string_view name);  // enum/string text, "" when absent
bool BoolOf(const Op& op, std::string_view name);         // true, unit; false when absent
// A dense literal as a value of `shape` (element types the evaluator cannot hold parse for
// their syntax and give a placeholder, as HLO text's constants do).
Result<std::shared_ptr<const hlo::Value>> DenseValue(const DenseLiteral& dense,
                                                     const hlo::Shape& shape);
hlo::DotPrecision PrecisionOf(const Op& op);

}  // namespace tpuemu::engine::stablehlo::internal
