// Helpers shared by verifier.cpp and the shape_inference*.cpp files. Internal to engine/hlo.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "engine/hlo/module.h"

namespace tpuemu::engine::hlo::internal {

struct InferContext {
  const Module& module;
  const Instruction& inst;
  std::vector<const Shape*> operands;
};

// INVALID_ARGUMENT "%name (opcode, line L): message".
Status Bad(const Instruction& inst, const std::string& message);
bool IsScalar(const Shape& s);
std::string Dims(const std::vector<int64_t>& dims);  // "{0,1}"
// Every value in [0, rank) and no repeats.
bool ValidDims(const std::vector<int64_t>& dims, int64_t rank);
// The declared shape, or an error saying the opcode needs one.
Result<Shape> Declared(const InferContext& c);
// Checks operand count (exact, or at least `min` when exact < 0) and that they are arrays.
Status OperandCount(const InferContext& c, int exact, int min = 0);
Status ArrayOperands(const InferContext& c);
// The called computation in `slot`, or an error naming `role` (to_apply, body, ...).
Result<const Computation*> Called(const InferContext& c, size_t slot, const char* role);
// Checks that computation `comp` takes parameters of `params` shapes (compatible) and returns
// its root shape.
Result<Shape> CheckSignature(const InferContext& c, const Computation& comp,
                             const std::vector<Shape>& params, const char* role);
const Shape& RootShape(const Computation& comp);

// Per opcode family; each returns the expected result shape.
Result<Shape> InferElementwise(const InferContext& c);
Result<Shape> InferDataMovement(const InferContext& c);
Result<Shape> InferDotOrConvolution(const InferContext& c);
Result<Shape> InferGatherOrScatter(const InferContext& c);
Result<Shape> InferReduction(const InferContext& c);  // reduce, reduce-window, select-and-scatter,
                                                      // sort, topk, map
Result<Shape> InferCollective(const InferContext& c);
Result<Shape> InferControlFlow(const InferContext& c);  // tuple, gte, while, call, fusion, async

}  // namespace tpuemu::engine::hlo::internal
