// Per-instruction compute on one device: MXU cycles for dot/convolution, VPU issue cycles for
// the rest, collective cycles on the slice's torus, all from the chip model
// (engine/chip/chip_model.h).
#include <algorithm>
#include <cmath>

#include "engine/hlo/cost_model_internal.h"
#include "engine/hlo/evaluator_internal.h"

namespace tpuemu::engine::hlo::internal {
namespace {

int64_t Elements(const Shape& s) {
  std::vector<const Shape*> leaves;
  CollectLeaves(s, leaves);
  int64_t n = 0;
  for (const Shape* l : leaves) n += l->IsArray() ? l->ElementCount() : 0;
  return n;
}

const Shape& OperandShape(const Computation& comp, const Instruction& inst, size_t i) {
  return comp.instructions[static_cast<size_t>(inst.operands[i])].shape;
}

int Passes(const PriceContext& ctx, const Computation& comp, const Instruction& inst) {
  const PrimitiveType a = OperandShape(comp, inst, 0).type;
  const PrimitiveType b = OperandShape(comp, inst, 1).type;
  // bf16 (and integer) operands are exact in one bf16 pass whatever the precision asks.
  const bool narrow = (a == PrimitiveType::kBF16 || !IsFloating(a)) &&
                      (b == PrimitiveType::kBF16 || !IsFloating(b));
  if (narrow) return 1;
  return MxuPasses(EffectivePrecision(inst.precision, ctx.options.precision));
}

ComputeCost FromOpCost(const OpCost& c, std::string unit) {
  ComputeCost out;
  out.unit = std::move(unit);
  out.compute_cycles = c.compute_cycles;
  out.flops = c.flops;
  return out;
}

ComputeCost Mxu(const PriceContext& ctx, int64_t batch, GemmShape gemm, int passes) {
  const int tc = ctx.tensorcores;
  const TimingMode mode = ctx.options.timing_mode;
  const Dataflow dataflow = ctx.options.dataflow;
  const OpCost rows = DotCost(ctx.spec, batch, gemm, passes, 2, tc, mode, dataflow);
  ComputeCost out = FromOpCost(rows, "mxu");
  out.compute_cycles = MxuCycles(rows.compute_cycles, mode);
  out.mxu_flops = rows.flops;
  out.passes = passes;
  out.folds = rows.folds;
  out.split = tc > 1 ? SplitKind::kRows : SplitKind::kNone;
  out.gemm_batch = batch;
  out.gemm = gemm;
  if (tc == 1 || gemm.k < 2 * tc) return out;
  // The alternative XLA also weighs: split K, then all-reduce the f32 partial results.
  GemmShape part = gemm;
  part.k = (gemm.k + tc - 1) / tc;
  const OpCost k_split = DotCost(ctx.spec, batch, part, passes, 2, 1, mode, dataflow);
  const int64_t k_split_cycles = MxuCycles(k_split.compute_cycles, mode);
  const double result_bytes = static_cast<double>(batch) * gemm.m * gemm.n * 4.0;
  const int64_t all_reduce =
      TensorCoreCollectiveCycles(ctx.type, engine::Collective::kAllReduce, tc, result_bytes);
  if (k_split_cycles + all_reduce >= out.compute_cycles) return out;
  out.compute_cycles = k_split_cycles;
  out.collective_cycles = all_reduce;
  out.folds = k_split.folds * tc;
  out.split = SplitKind::kContraction;
  return out;
}

ComputeCost PriceDot(const PriceContext& ctx, const Computation& comp, const Instruction& inst) {
  const DotDims& d = inst.a().dot;
  const Shape& l = OperandShape(comp, inst, 0);
  const Shape& r = OperandShape(comp, inst, 1);
  auto size = [](const Shape& s, const std::vector<int64_t>& dims) {
    int64_t n = 1;
    for (int64_t x : dims) n *= s.dims[static_cast<size_t>(x)];
    return n;
  };
  const int64_t batch = size(l, d.lhs_batch);
  const int64_t k = size(l, d.lhs_contracting);
  const int64_t m = batch * k == 0 ? 0 : l.ElementCount() / (batch * k);
  const int64_t n = batch * k == 0 ? 0 : r.ElementCount() / (batch * k);
  return Mxu(ctx, batch, {m, n, k}, Passes(ctx, comp, inst));
}

ComputeCost PriceConvolution(const PriceContext& ctx, const Computation& comp,
                             const Instruction& inst) {
  const Attributes& a = inst.a();
  const ConvDims& cd = a.conv;
  const Shape& k = OperandShape(comp, inst, 1);
  const Shape& out = inst.shape;
  const int64_t groups = std::max(a.feature_group_count, a.batch_group_count);
  int64_t window = 1, positions = 1;
  for (int64_t s : cd.kernel_spatial) window *= k.dims[static_cast<size_t>(s)];
  for (int64_t s : cd.output_spatial) positions *= out.dims[static_cast<size_t>(s)];
  const int64_t cin = k.dims[static_cast<size_t>(cd.kernel_input_feature)];
  const int64_t cout =
      out.dims[static_cast<size_t>(cd.output_feature)] / std::max<int64_t>(groups, 1);
  const int64_t rows = out.dims[static_cast<size_t>(cd.output_batch)] * positions;
  return Mxu(ctx, groups, {rows, cout, window * cin}, Passes(ctx, comp, inst));
}

// Devices in one replica group of a collective (the first group, or every device of its mode).
int GroupSize(const Module& module, const Instruction& inst) {
  const auto& groups = inst.a().replica_groups;
  if (!groups.empty()) return static_cast<int>(groups[0].size());
  if (!inst.a().channel_id) return static_cast<int>(module.replica_count);
  switch (inst.opcode) {
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart:
    case Opcode::kAllGather:
    case Opcode::kAllGatherStart:
    case Opcode::kReduceScatter:  // flattened ids or replicas x partitions: every device
      return static_cast<int>(module.devices());
    default:
      return static_cast<int>(module.num_partitions);
  }
}

ComputeCost PriceCollective(const PriceContext& ctx, const Computation& comp,
                            const Instruction& inst) {
  ComputeCost out;
  out.unit = "ici";
  const int group = std::max(GroupSize(ctx.module, inst), 1);
  double bytes = 0;
  for (size_t i = 0; i < inst.operands.size(); ++i) bytes += OperandShape(comp, inst, i).ByteSize();
  const double result_bytes = inst.shape.ByteSize();
  const int participants = group * ctx.tensorcores;
  auto collective = [&](engine::Collective kind, double b) {
    return TensorCoreCollectiveCycles(ctx.type, kind, participants, b);
  };
  switch (inst.opcode) {
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart:
      out.collective_cycles = collective(engine::Collective::kAllReduce, bytes);
      out.flops = static_cast<double>(Elements(inst.shape)) * (group - 1);
      break;
    case Opcode::kAllGather:
    case Opcode::kAllGatherStart:
      out.collective_cycles = collective(engine::Collective::kAllGather, result_bytes);
      break;
    case Opcode::kReduceScatter:
      out.collective_cycles = collective(engine::Collective::kReduceScatter, bytes);
      out.flops = static_cast<double>(Elements(inst.shape)) * (group - 1);
      break;
    case Opcode::kAllToAll:
      out.collective_cycles = collective(engine::Collective::kAllToAll, bytes);
      break;
    default:  // collective-permute(-start), collective-broadcast: one hop
      out.collective_cycles = group > 1 || !inst.a().source_target_pairs.empty()
                                  ? collective(engine::Collective::kPermute, bytes)
                                  : 0;
  }
  return out;
}

double VpuOps(Opcode op) {
  switch (op) {
    case Opcode::kDivide:
    case Opcode::kPower:
    case Opcode::kRemainder:
    case Opcode::kRsqrt:
    case Opcode::kSqrt:
      return kVpuOpsDivide;
    default:
      return IsTranscendental(op) ? kVpuOpsTranscendental : kVpuOpsElementwise;
  }
}

}  // namespace

bool IsFree(Opcode op) {
  switch (op) {
    case Opcode::kParameter:
    case Opcode::kConstant:
    case Opcode::kTuple:
    case Opcode::kGetTupleElement:
    case Opcode::kBitcast:
    case Opcode::kAfterAll:
    case Opcode::kAddDependency:
    case Opcode::kOptimizationBarrier:
    case Opcode::kDomain:
    case Opcode::kPartitionId:
    case Opcode::kReplicaId:
    case Opcode::kGetDimensionSize:
    case Opcode::kAsyncUpdate:
    case Opcode::kAsyncDone:
    case Opcode::kAllReduceDone:
    case Opcode::kAllGatherDone:
    case Opcode::kCollectivePermuteDone:
    case Opcode::kCopyDone:
    case Opcode::kRngGetAndUpdateState:
      return true;
    default:
      return false;
  }
}

bool IsControlFlow(Opcode op) {
  return op == Opcode::kWhile || op == Opcode::kConditional || op == Opcode::kCall ||
         op == Opcode::kAsyncStart;
}

ComputeCost PriceCompute(const PriceContext& ctx, const Computation& comp,
                         const Instruction& inst) {
  ComputeCost out;
  const Opcode op = inst.opcode;
  if (IsFree(op) || IsControlFlow(op) || inst.IsPassThroughCustomCall()) {
    out.unit = "none";
    out.free = true;
    return out;
  }
  if (!inst.Unsupported().empty()) {
    out.unit = "none";
    out.supported = false;
    return out;
  }
  if (op == Opcode::kDot) return PriceDot(ctx, comp, inst);
  if (op == Opcode::kConvolution) return PriceConvolution(ctx, comp, inst);
  if (IsCollective(op)) return PriceCollective(ctx, comp, inst);
  if (op == Opcode::kFusion) {
    // The body's compute; its HBM traffic is the fusion's (cost_traffic.cpp).
    const Computation& body = ctx.module.computations[static_cast<size_t>(inst.called[0])];
    out.unit = "vpu";
    int gemms = 0;
    for (const Instruction& inner : body.instructions) {
      const ComputeCost c = PriceCompute(ctx, body, inner);
      if (!c.supported) out.supported = false;
      if (c.unit == "mxu") {
        out.unit = "mxu";
        // One GEMM names the fusion's shape; with several there is no single one.
        out.gemm_batch = ++gemms == 1 ? c.gemm_batch : 1;
        out.gemm = gemms == 1 ? c.gemm : GemmShape{};
      }
      out.compute_cycles += c.compute_cycles;
      out.collective_cycles += c.collective_cycles;
      out.flops += c.flops;
      out.mxu_flops += c.mxu_flops;
      out.passes = std::max(out.passes, c.passes);
      out.folds += c.folds;
      if (c.split != SplitKind::kNone) out.split = c.split;
    }
    return out;
  }
  double ops = VpuOps(op);
  int64_t elements = Elements(inst.shape);
  switch (op) {
    case Opcode::kReduce:
    case Opcode::kReduceWindow:
    case Opcode::kSelectAndScatter:
    case Opcode::kScatter:
      elements = 0;  // per input element
      for (size_t i = 0; i < inst.operands.size(); ++i)
        elements += Elements(OperandShape(comp, inst, i));
      ops = kVpuOpsReduce;
      break;
    case Opcode::kSort:
    case Opcode::kTopK: {
      const Shape& x = OperandShape(comp, inst, 0);
      const double len = x.dims.empty() ? 1.0 : static_cast<double>(x.dims.back());
      ops = 2.0 * std::max(1.0, std::log2(std::max(len, 2.0)));
      break;
    }
    default:
      break;
  }
  return FromOpCost(VectorCost(ctx.spec, elements, ops, 0, ctx.tensorcores), "vpu");
}

}  // namespace tpuemu::engine::hlo::internal
