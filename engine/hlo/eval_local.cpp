// One instruction on one device: the dispatch from opcode to kernel for everything that is not
// control flow or a collective (evaluator.cpp handles those).
#include "engine/hlo/evaluator_internal.h"

namespace tpuemu::engine::hlo::internal {
namespace {

std::vector<const Array*> Arrays(const std::vector<const Value*>& ops, size_t from = 0) {
  std::vector<const Array*> arrays;
  for (size_t i = from; i < ops.size(); ++i) arrays.push_back(ops[i]->array.get());
  return arrays;
}

Value ScalarValue(PrimitiveType type, int64_t v) {
  Array a = Array::Zeros(type, {});
  a.i[0] = CanonicalInt(type, v);
  return Value::Of(std::move(a));
}

}  // namespace

Result<Value> EvalLocal(KernelContext& ctx, const Computation& comp, const Instruction& inst,
                        const std::vector<const Value*>& ops, const std::vector<Array*>& donors,
                        int device, uint64_t* counter) {
  const Opcode op = inst.opcode;
  auto x = [&](size_t i) -> const Array& { return *ops[i]->array; };
  const EvalOptions& options = ctx.options();
  const Precision precision = EffectivePrecision(inst.precision, options.precision);
  if (IsElementwiseUnary(op) || op == Opcode::kConvert || op == Opcode::kBitcastConvert ||
      op == Opcode::kReducePrecision) {
    return Value::Of(ApplyUnary(OpOf(inst), x(0), options.Parallel(), donors[0]));
  }
  if (IsElementwiseBinary(op)) {
    return Value::Of(ApplyBinary(OpOf(inst), x(0), x(1), options.Parallel(),
                                 donors[0] != nullptr ? donors[0] : donors[1]));
  }
  switch (op) {
    case Opcode::kConstant:
      return inst.literal ? *inst.literal : ctx.ElidedConstant(inst);
    case Opcode::kSelect:
      return Value::Of(Select(x(0), x(1), x(2), options.Parallel(),
                              donors[1] != nullptr ? donors[1] : donors[2]));
    case Opcode::kClamp:
      return Value::Of(Clamp(x(0), x(1), x(2), inst.shape.type));
    case Opcode::kIota:
      return Value::Of(Iota(inst.shape, inst.index));
    case Opcode::kBroadcast:
      return Value::Of(Broadcast(x(0), inst.shape.dims, inst.dimensions, options.Parallel()));
    case Opcode::kReshape: {  // the dying operand's buffer as is, else a copy
      Array out = donors[0] != nullptr ? std::move(*donors[0]) : x(0);
      out.dims = inst.shape.dims;
      return Value::Of(std::move(out));
    }
    case Opcode::kBitcast:  // the operand's declared layout says how its buffer is laid out
      return Value::Of(Bitcast(x(0), comp.instructions[static_cast<size_t>(inst.operands[0])].shape,
                               inst.shape));
    case Opcode::kCustomCall:  // only pass-through targets get here (CheckEvaluable)
    case Opcode::kCopy:
    case Opcode::kOptimizationBarrier:
    case Opcode::kDomain:
    case Opcode::kAddDependency:
    case Opcode::kAsyncUpdate:
    case Opcode::kAllReduceDone:
      return *ops[0];
    case Opcode::kCopyStart:
      return Value::Tuple({*ops[0], *ops[0], ZerosLike(Shape::Array(PrimitiveType::kU32, {}))});
    case Opcode::kCopyDone:
      return ops[0]->elements[0];
    case Opcode::kAllGatherDone:
    case Opcode::kCollectivePermuteDone:
      if (!ops[0]->is_tuple) return *ops[0];
      return ops[0]->elements[1];
    case Opcode::kAsyncDone:
      return ops[0]->elements[1];
    case Opcode::kAfterAll:
      return Value::Tuple({});
    case Opcode::kTuple: {
      std::vector<Value> elements;
      for (const Value* v : ops) elements.push_back(*v);
      return Value::Tuple(std::move(elements));
    }
    case Opcode::kGetTupleElement:
      return ops[0]->elements[static_cast<size_t>(inst.index)];
    case Opcode::kTranspose:
      return Value::Of(Transpose(x(0), inst.dimensions, options.Parallel()));
    case Opcode::kReverse:
      return Value::Of(Reverse(x(0), inst.dimensions));
    case Opcode::kSlice: {
      const Attributes& a = inst.a();
      return Value::Of(Slice(x(0), a.slice_start, a.slice_limit, a.slice_stride));
    }
    case Opcode::kDynamicSlice: {
      const std::vector<int64_t>& sizes = inst.a().dynamic_slice_sizes;
      return Value::Of(DynamicSlice(x(0), ClampedStarts(Arrays(ops, 1), x(0).dims, sizes), sizes));
    }
    case Opcode::kDynamicUpdateSlice:
      return Value::Of(
          DynamicUpdateSlice(x(0), x(1), ClampedStarts(Arrays(ops, 2), x(0).dims, x(1).dims)));
    case Opcode::kConcatenate:
      return Value::Of(Concatenate(Arrays(ops), inst.dimensions[0]));
    case Opcode::kPad:
      return Value::Of(Pad(x(0), GetScalar(x(1), 0), inst.a().padding));
    case Opcode::kGetDimensionSize:
      return ScalarValue(PrimitiveType::kS32, x(0).dims[static_cast<size_t>(inst.dimensions[0])]);
    case Opcode::kReplicaId:
      return ScalarValue(PrimitiveType::kU32, device / ctx.module().num_partitions);
    case Opcode::kPartitionId:
      return ScalarValue(PrimitiveType::kU32, device % ctx.module().num_partitions);
    case Opcode::kDot: {
      auto out = Dot(inst, x(0), x(1), precision, ctx.options().Parallel());
      if (!out.ok()) return out.status();
      return Value::Of(std::move(*out));
    }
    case Opcode::kConvolution: {
      auto out = Convolution(inst, x(0), x(1), precision, ctx.options().Parallel());
      if (!out.ok()) return out.status();
      return Value::Of(std::move(*out));
    }
    case Opcode::kReduce:
      return Reduce(ctx, inst, Arrays(ops));
    case Opcode::kReduceWindow:
      return ReduceWindow(ctx, inst, Arrays(ops));
    case Opcode::kSelectAndScatter: {
      auto out = SelectAndScatter(ctx, inst, x(0), x(1), x(2));
      if (!out.ok()) return out.status();
      return Value::Of(std::move(*out));
    }
    case Opcode::kBatchNormTraining:
    case Opcode::kBatchNormInference:
    case Opcode::kBatchNormGrad:
      return BatchNorm(inst, Arrays(ops));
    case Opcode::kGather:
      return Value::Of(Gather(inst, x(0), x(1)));
    case Opcode::kScatter:
      return Scatter(ctx, inst, Arrays(ops));
    case Opcode::kSort:
      return Sort(ctx, inst, Arrays(ops));
    case Opcode::kTopK:
      return TopK(inst, x(0));
    case Opcode::kMap: {
      auto out = Map(ctx, inst, Arrays(ops));
      if (!out.ok()) return out.status();
      return Value::Of(std::move(*out));
    }
    case Opcode::kRngBitGenerator:
      return RngBitGenerator(inst, x(0));
    case Opcode::kRng:
      return Value::Of(Rng(inst, x(0), x(1), options.seed, ++*counter));
    case Opcode::kRngGetAndUpdateState: {
      Array state = Array::Zeros(PrimitiveType::kU64, {2});
      state.i[0] = static_cast<int64_t>(options.seed);
      state.i[1] = static_cast<int64_t>(*counter);
      *counter += static_cast<uint64_t>(inst.a().delta);
      return Value::Of(std::move(state));
    }
    default:
      return Status::Unimplemented(inst.Describe() + ": not supported by the evaluator");
  }
}

}  // namespace tpuemu::engine::hlo::internal
