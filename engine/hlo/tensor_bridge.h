// The one place that knows both tensor vocabularies: the engine's (engine/runtime/tensor.h: DType,
// Shape, Tensor; what a job's weights, feeds and results are) and the HLO stack's
// (engine/hlo/array.h, primitive_type.h: PrimitiveType, Array, Value; what the evaluator computes
// on). Every conversion between them is here, so that each side keeps its own rules (a Tensor
// holds f32/bf16/int32, an Array every XLA type) and a reader finds in one file what crosses:
//   DType <-> PrimitiveType    LoweredType, GraphDType
//   Tensor -> Value             ArgumentOf (a job step's feeds and weights: a copy, the Tensor is
//                               the caller's and stays theirs)
//   Value -> Tensor             TensorOf (a step's outputs: the buffer moves over when nobody else
//                               holds the array, as the evaluator's outputs are held; a copy else)
// f32 and bf16 both hold f32 values on either side in the same recycled buffers
// (buffer_cache.h), so a float array becomes a tensor without a copy; int32 tensors are int64
// arrays here, and those copy. Pure functions: thread-safe.
#pragma once

#include <memory>
#include <optional>

#include "base/status.h"
#include "engine/hlo/array.h"
#include "engine/hlo/primitive_type.h"
#include "engine/runtime/parallel.h"
#include "engine/runtime/tensor.h"

namespace tpuemu::engine::hlo {

// The element type a DType lowers to (f32, bf16, s32).
PrimitiveType LoweredType(DType dtype);
// The DType of an f32, bf16 or s32 element type; INTERNAL for any other (no op lowers to one).
Result<DType> GraphDType(PrimitiveType type);

// A native tensor as the argument a lowered module's parameter takes (the same values, copied).
// With a parallel context the copy runs in chunks on its threads and gives nullopt once its token
// stops it (a job's step copies hundreds of MiB of weights: engine/frontend/graph_program.h).
Value ArgumentOf(const Tensor& t);
std::optional<Value> ArgumentOf(const Tensor& t, const ParallelContext& parallel);

// An array (of f32, bf16 or s32, which `dtype` names: f32/bf16/int32) as a tensor of `dtype`
// with the same values. When `array` is the only reference to a float array, its buffer becomes
// the tensor's (no copy, the array is left empty); otherwise, and for s32, the values are copied
// in chunks on `parallel`'s threads. nullopt once the token stopped a copy.
std::optional<Tensor> TensorOf(std::shared_ptr<const Array> array, DType dtype,
                               const ParallelContext& parallel);

}  // namespace tpuemu::engine::hlo
