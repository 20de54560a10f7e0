// Elementwise arithmetic with XLA's CPU-reference semantics, on single elements (Scalar) and on
// whole arrays. Floats compute in f32 and round to the result type after every op (what XLA's
// evaluator does with Eigen's bf16/f16); integers wrap at their width; division by zero and
// INT_MIN / -1 give XLA's results (x / 0 = -1, x % 0 = x, INT_MIN / -1 = INT_MIN,
// INT_MIN % -1 = 0); shifts by the bit width or more give 0 (or the sign fill); maximum/minimum
// propagate NaN; compare type=TOTALORDER orders -NaN < -inf < -0 < +0 < inf < NaN.
// exp, tanh and logistic use the engine's functions (engine/kernels/vector_math.h, Cephes'
// polynomials, within 2 ulp), the ones the native graph's kernels use, so the two give the same
// bits; the other transcendentals use the C library in f32 (within a few ulp of XLA CPU's
// polynomials). Pure functions; thread-safe. Callers pass operands the verifier accepted.
#pragma once

#include "base/status.h"
#include "engine/hlo/array.h"
#include "engine/hlo/module.h"
#include "engine/runtime/parallel.h"

namespace tpuemu::engine::hlo {

// One element of any evaluable type: f for f16/bf16/f32 (already rounded), i for the others.
struct Scalar {
  PrimitiveType type = PrimitiveType::kF32;
  float f = 0;
  int64_t i = 0;
};

Scalar GetScalar(const Array& a, int64_t k);
void SetScalar(Array& a, int64_t k, const Scalar& s);  // s.type must be a's kind

struct ElementwiseOp {
  Opcode opcode = Opcode::kAdd;
  PrimitiveType out_type = PrimitiveType::kF32;
  Direction direction = Direction::kEq;  // compare
  CompareType compare_type = CompareType::kDefault;
  int64_t exponent_bits = 8, mantissa_bits = 23;  // reduce-precision
};

// The elementwise op an instruction applies (opcode, result type, compare direction/type,
// reduce-precision bits).
ElementwiseOp OpOf(const Instruction& inst);

// Unary maps, convert, bitcast-convert and reduce-precision.
Scalar ApplyUnary(const ElementwiseOp& op, const Scalar& x);
// Binary maps and compare (both operands of one kind; mixed float precisions allowed).
Scalar ApplyBinary(const ElementwiseOp& op, const Scalar& a, const Scalar& b);
// select(pred, on_true, on_false) and clamp(min, x, max) read operands per element; scalars
// broadcast. Whole arrays: a large float map runs in chunks (kElementwiseGrain) on `parallel`'s
// share of the pool, each element computed as alone, so the threads change no bit; a stopped
// cancel token leaves the rest unwritten (the caller checks the token). A float map writes its
// result into `donor`'s buffer when it fits (Array::Uninitialized): pass an operand that dies
// here and that nothing else holds.
Array ApplyUnary(const ElementwiseOp& op, const Array& x, const ParallelContext& parallel = {},
                 Array* donor = nullptr);
Array ApplyBinary(const ElementwiseOp& op, const Array& a, const Array& b,
                  const ParallelContext& parallel = {}, Array* donor = nullptr);
Array Select(const Array& pred, const Array& on_true, const Array& on_false,
             const ParallelContext& parallel = {}, Array* donor = nullptr);
Array Clamp(const Array& lo, const Array& x, const Array& hi, PrimitiveType out_type);
// One block of an f32 map, the values ApplyUnary/ApplyBinary give element by element: a unary
// op of a (not is-finite), a binary op of a and b, or a compare (not TOTALORDER) writing 1.0 for
// true and 0.0 for false; o may be a or b. The evaluator's loop fusion runs its ops with it.
void MapBlockF32(const ElementwiseOp& op, const float* a, const float* b, float* o, int64_t n);
// o[k] = values[(begin + k) / inner] for k < n: elements begin.. of a broadcast of `values`
// along trailing dims of `inner` elements (a fused loop's block of it).
void SplatRowsF32(const float* values, int64_t inner, int64_t begin, int64_t n, float* o);
// o[k] = mask[k] != 0 ? on_true[k] : on_false[k], as Select does.
void SelectBlockF32(const float* mask, const float* on_true, const float* on_false, float* o,
                    int64_t n);
// f32 folds with the values ApplyBinary gives, for add, multiply, maximum and minimum (false for
// any other opcode): FoldRowsF32 folds each of `rows` contiguous rows of `len` elements from
// init in order, out[r] = op(...op(op(init, x[r·len]), x[r·len + 1])...); AccumulateF32 folds one
// row into n accumulators, acc[j] = op(acc[j], x[j]).
bool FoldRowsF32(Opcode op, const float* x, int64_t rows, int64_t len, float init, float* out);
bool AccumulateF32(Opcode op, float* acc, const float* x, int64_t n);
// compare(a, b) for sorting/reducers: the boolean of `direction` under compare_type.
bool Compare(Direction direction, CompareType type, const Scalar& a, const Scalar& b);

}  // namespace tpuemu::engine::hlo
