// Kernels of the evaluator, one file per family (eval_data.cpp, eval_dot.cpp, eval_conv.cpp,
// eval_reduce.cpp, eval_gather.cpp, eval_sort.cpp, eval_rng.cpp, eval_collectives.cpp), and the
// interface they use to apply called computations to scalars. Internal to engine/hlo; every
// kernel trusts the verifier's checks of its instruction.
#pragma once

#include <atomic>

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "base/status.h"
#include "engine/hlo/elementwise.h"
#include "engine/hlo/evaluator.h"

namespace tpuemu::engine::hlo::internal {

// A called computation (reducer, comparator, map function, select/scatter) applied to scalars.
// Computations made only of scalar elementwise ops run on a register file; others go through the
// full evaluator (slow, but any computation works). Not thread-safe (owns scratch registers).
class ScalarComputation {
 public:
  using Fallback = std::function<Result<Value>(std::vector<Value> args)>;
  ScalarComputation(const Module& module, const Computation& comp, Fallback fallback);
  // results.size() == number of results (1, or the root tuple's size).
  Status Apply(const Scalar* args, Scalar* results);
  size_t results() const { return results_; }
  // When the computation is p0 OP p1 for a commutative OP (add, multiply, maximum, minimum, and,
  // or, xor) of one type: OP, so a reduction can skip the interpreter.
  std::optional<Opcode> simple_binary() const { return simple_; }

 private:
  const Computation& comp_;
  Fallback fallback_;
  bool compiled_ = false;
  size_t results_ = 1;
  std::optional<Opcode> simple_;
  std::vector<Scalar> registers_;
  std::vector<ElementwiseOp> ops_;  // per instruction
};

// What kernels may ask of the running evaluator.
class KernelContext {
 public:
  virtual ~KernelContext() = default;
  virtual const Module& module() const = 0;
  virtual const EvalOptions& options() const = 0;
  // The compiled scalar form of computation `index` (cached).
  virtual ScalarComputation& Scalar(int index) = 0;
  // The deterministic value of an elided constant (cached; docs/hlo.md).
  virtual const Value& ElidedConstant(const Instruction& inst) = 0;
};

Status CheckSize(const Instruction& inst, const Shape& shape, const Limits& limits);

// eval_data.cpp: layout/data movement.
// Broadcast and transpose copy a large float array in chunks on `parallel`'s threads.
Array Broadcast(const Array& x, const std::vector<int64_t>& out_dims,
                const std::vector<int64_t>& dimensions, const ParallelContext& parallel = {});
Array Transpose(const Array& x, const std::vector<int64_t>& perm,
                const ParallelContext& parallel = {});
Array Reverse(const Array& x, const std::vector<int64_t>& dims);
Array Slice(const Array& x, const std::vector<int64_t>& start, const std::vector<int64_t>& limit,
            const std::vector<int64_t>& stride);
Array Concatenate(const std::vector<const Array*>& xs, int64_t dim);
Array Pad(const Array& x, const Scalar& value, const std::vector<PadDim>& padding);
Array Iota(const Shape& shape, int64_t dim);
// Start indices clamped so the window fits (XLA's dynamic-slice rule).
std::vector<int64_t> ClampedStarts(const std::vector<const Array*>& index_operands,
                                   const std::vector<int64_t>& operand_dims,
                                   const std::vector<int64_t>& sizes);
Array DynamicSlice(const Array& x, const std::vector<int64_t>& starts,
                   const std::vector<int64_t>& sizes);
Array DynamicUpdateSlice(const Array& x, const Array& update, const std::vector<int64_t>& starts);
// bitcast: reinterprets the operand's physical buffer (its layout) as the result's layout.
Array Bitcast(const Array& x, const Shape& from, const Shape& to);

// eval_dot.cpp / eval_conv.cpp: the MXU path. The GEMMs poll `cancel` (may be null) between
// their tiles (engine/kernels/gemm.h): CANCELLED "HLO execution cancelled in <instruction>" once it
// is set.
Result<Array> Dot(const Instruction& inst, const Array& lhs, const Array& rhs, Precision precision,
                  const ParallelContext& parallel = {});
Result<Array> Convolution(const Instruction& inst, const Array& lhs, const Array& rhs,
                          Precision precision, const ParallelContext& parallel = {});
Precision EffectivePrecision(DotPrecision text, Precision fallback);
// Whether Dot reads its lhs (lhs true) or rhs operand of `rank` dims with these batch and
// contracting dims in place, row-major or (a float dot) transposed; otherwise it copies it.
bool DotReadsInPlace(int64_t rank, const std::vector<int64_t>& batch,
                     const std::vector<int64_t>& contracting, bool lhs, bool floating);
// Row-major f32 GEMM C[m,n] = A[m,k]·B[k,n] with TPU numerics, its tiles on `parallel`'s share
// of the pool; false when its cancel token stopped it (C then holds partial results).
bool Gemm(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k,
          Precision precision, const ParallelContext& parallel = {});
// The status of a dot or convolution that `cancel` stopped.
Status CancelledIn(const Instruction& inst);

// eval_reduce.cpp
Result<Value> Reduce(KernelContext& ctx, const Instruction& inst,
                     const std::vector<const Array*>& operands);
Result<Value> ReduceWindow(KernelContext& ctx, const Instruction& inst,
                           const std::vector<const Array*>& operands);
Result<Array> SelectAndScatter(KernelContext& ctx, const Instruction& inst, const Array& operand,
                               const Array& source, const Array& init);
Result<Value> BatchNorm(const Instruction& inst, const std::vector<const Array*>& operands);

// eval_gather.cpp
Array Gather(const Instruction& inst, const Array& operand, const Array& indices);
Result<Value> Scatter(KernelContext& ctx, const Instruction& inst,
                      const std::vector<const Array*>& operands);

// eval_sort.cpp
Result<Value> Sort(KernelContext& ctx, const Instruction& inst,
                   const std::vector<const Array*>& operands);
Result<Value> TopK(const Instruction& inst, const Array& x);
Result<Array> Map(KernelContext& ctx, const Instruction& inst,
                  const std::vector<const Array*>& operands);

// eval_rng.cpp
Value RngBitGenerator(const Instruction& inst, const Array& state);
Array Rng(const Instruction& inst, const Array& a, const Array& b, uint64_t seed, uint64_t call);
// Deterministic fill of an elided constant or a seeded parameter (docs/hlo.md).
Array FillDeterministic(const Shape& shape, uint64_t seed, uint64_t stream);

}  // namespace tpuemu::engine::hlo::internal

namespace tpuemu::engine::hlo::internal {

// eval_collectives.cpp: all devices running `inst` in lockstep. devices[lane] is a device id
// (replica * num_partitions + partition); operands[lane] that lane's operand values. Returns
// each lane's result. INVALID_ARGUMENT when a group member is not among `devices` (the devices
// diverged) or a replica group names an id that does not exist.
Result<std::vector<Value>> Collective(KernelContext& ctx, const Instruction& inst,
                                      const std::vector<int>& devices,
                                      const std::vector<std::vector<const Value*>>& operands);
// A value of `shape` with every element zero.
Value ZerosLike(const Shape& shape);

}  // namespace tpuemu::engine::hlo::internal
