#include "engine/cost/program_profile.h"

#include <algorithm>
#include <set>

#include "engine/frontend/compiler.h"

namespace tpuemu::engine::cost {
namespace {

// Which GEMM dimension carries a batch of `batch` items (for the data-parallel split).
GemmDim BatchDim(int64_t gemm_batch, GemmShape g, int64_t batch) {
  if (batch <= 1) return GemmDim::kNone;
  if (gemm_batch >= batch && gemm_batch % batch == 0) return GemmDim::kBatch;
  if (g.m >= batch && g.m % batch == 0) return GemmDim::kM;
  if (g.k >= batch && g.k % batch == 0) return GemmDim::kK;
  return GemmDim::kNone;
}

}  // namespace

StepProfile ProfileFromFigures(const ProgramFigures& f) {
  StepProfile p;
  p.name = f.name;
  p.source = f.source;
  p.unit = f.unit;
  p.global_batch = std::max<int64_t>(f.global_batch, 1);
  p.units_per_step = f.units_per_step > 0 ? f.units_per_step : static_cast<double>(p.global_batch);
  p.parameters = f.parameter_count;
  p.training = f.gradient_bytes > 0;
  p.other = {f.parameter_bytes, f.gradient_bytes, 0, f.parameter_bytes};
  p.activation_bytes = f.activation_bytes;
  double flops = 0;
  for (const InstructionCost& in : f.instructions) {
    ProfileOp op{.name = in.name,
                 .unit = in.on_mxu ? OpUnit::kMxu : OpUnit::kVector,
                 .scaling = in.carries_batch ? Scaling::kBatch : Scaling::kReplicated,
                 .mxu_flops = in.on_mxu ? in.flops : 0,
                 .vpu_ops = in.vpu_ops,
                 .hbm_bytes = in.hbm_bytes,
                 .gemm_batch = in.gemm_batch,
                 .gemm = in.gemm,
                 .passes = std::max(in.passes, 1)};
    op.batch_dim = !in.carries_batch ? GemmDim::kNone
                   : in.batch_dim != GemmDim::kNone
                       ? in.batch_dim
                       : BatchDim(in.gemm_batch, in.gemm, p.global_batch);
    flops += op.mxu_flops;
    p.ops.push_back(std::move(op));
  }
  p.model_flops = f.model_flops > 0 ? f.model_flops : flops;
  return p;
}

Result<ProgramFigures> FiguresFromGraph(const Graph& graph, int64_t batch) {
  TPUEMU_RETURN_IF_ERROR(graph.status());
  const auto& ops = graph.ops();
  int first_param = -1;
  for (size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].kind == OpKind::kParameter && ops[i].shape.rank() >= 1) {
      first_param = static_cast<int>(i);
      break;
    }
  }
  if (batch <= 0) {
    if (first_param < 0) {
      return Status::InvalidArgument(
          "program has no parameter to take the batch from: give the batch explicitly");
    }
    batch = ops[static_cast<size_t>(first_param)].shape.dim(0);
  }
  Result<Slice> slice = Slice::FromAcceleratorType("v5p-8");
  if (!slice.ok()) return slice.status();
  CompileOptions options;  // DEFAULT precision, one TensorCore: per-op figures, no sharding
  auto compiled = Compile(graph, *slice, options);
  if (!compiled.ok()) return compiled.status();
  const CompiledProgram& program = **compiled;

  ProgramFigures f;
  f.name = graph.name();
  f.global_batch = batch;
  // Data: the first parameter and int32 labels of the same batch; weights: the other leaves.
  std::vector<bool> carries(ops.size(), false);
  std::set<std::vector<int64_t>> weight_shapes;
  for (size_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    if (op.kind == OpKind::kParameter || op.kind == OpKind::kConstant) {
      const bool labels = op.kind == OpKind::kParameter && op.dtype == DType::kI32 &&
                          op.shape.rank() >= 1 && op.shape.dim(0) == batch;
      carries[i] = static_cast<int>(i) == first_param || labels;
      if (!carries[i]) {
        f.parameter_bytes += static_cast<double>(program.plans[i].result_bytes);
        f.parameter_count += static_cast<double>(op.shape.NumElements());
        weight_shapes.insert(op.shape.dims);
      }
      continue;
    }
    for (int in : op.input_index) carries[i] = carries[i] || carries[static_cast<size_t>(in)];
    const OpPlan& plan = program.plans[i];
    // Where the batch lies in the GEMM: the rows of a dot's batch-carrying lhs, or the
    // contraction when it is transposed (dW = xᵀ·dy); a convolution's rows, except the filter
    // gradient's, which contracts them.
    GemmDim batch_dim = GemmDim::kNone;
    if (plan.on_mxu && carries[i]) {
      const bool lhs = carries[static_cast<size_t>(op.input_index[0])];
      if (op.kind == OpKind::kDot && op.shape.rank() > 2 && plan.batch > 1) {
        batch_dim = GemmDim::kBatch;
      } else if (op.kind == OpKind::kDot) {
        batch_dim = lhs ? (op.attrs.transpose_lhs ? GemmDim::kK : GemmDim::kM)
                        : (op.attrs.transpose_rhs ? GemmDim::kN : GemmDim::kK);
      } else {
        batch_dim = op.kind == OpKind::kConv2DBackpropFilter ? GemmDim::kK : GemmDim::kM;
      }
    }
    InstructionCost cost{.name = op.id,
                         .on_mxu = plan.on_mxu,
                         .flops = plan.on_mxu ? plan.cost.flops : 0,
                         .vpu_ops = plan.on_mxu ? 0 : plan.cost.flops,
                         .hbm_bytes = plan.cost.hbm_bytes,
                         .gemm_batch = plan.batch,
                         .gemm = plan.gemm,
                         .carries_batch = carries[i],
                         .batch_dim = batch_dim};
    f.instructions.push_back(std::move(cost));
  }
  for (const std::string& out : graph.outputs()) {
    const int index = graph.IndexOf(out);
    if (index < 0) continue;
    const Op* op = &ops[static_cast<size_t>(index)];
    // A weight gradient's work carries the batch (dW = xᵀ·dy) but its shape is the weight's and
    // its rows are not the batch's.
    if (op->shape.rank() >= 1 && weight_shapes.count(op->shape.dims) > 0 &&
        (op->shape.dim(0) != batch || !carries[static_cast<size_t>(index)])) {
      f.gradient_bytes += static_cast<double>(op->shape.NumElements()) * DTypeBytes(op->dtype);
    }
  }
  f.activation_bytes =
      std::max(0.0, static_cast<double>(program.peak_hbm_bytes_per_tensorcore) - f.parameter_bytes);
  return f;
}

}  // namespace tpuemu::engine::cost
