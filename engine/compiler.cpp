#include "engine/compiler.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "engine/gemm.h"
#include "engine/hardware.h"
#include "engine/hlo/graph_program.h"
#include "engine/hlo/host_memory.h"

namespace tpuemu::engine {
namespace {

std::string Gib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2fG", bytes / kGiB);
  return buf;
}

void AppendDims(std::string& s, const std::vector<int64_t>& v) {
  s += '[';
  for (int64_t d : v) s += std::to_string(d) + ',';
  s += ']';
}

// The GEMM a matmul op lowers to (per batch item) and the batch count.
void MatmulGemm(const Op& op, const Graph& graph, int64_t* batch, GemmShape* gemm) {
  const Op& a = graph.ops()[static_cast<size_t>(op.input_index[0])];
  const Op& b = graph.ops()[static_cast<size_t>(op.input_index[1])];
  *batch = 1;
  switch (op.kind) {
    case OpKind::kDot: {
      const int r = op.shape.rank();
      for (int i = 0; i < r - 2; ++i) *batch *= op.shape.dim(i);
      gemm->m = op.shape.dim(r - 2);
      gemm->n = op.shape.dim(r - 1);
      const int ar = a.shape.rank();
      gemm->k = a.shape.dim(ar - (op.attrs.transpose_lhs ? 2 : 1));
      break;
    }
    case OpKind::kConv2D:  // im2col: [n·oh·ow, fh·fw·cin] · [fh·fw·cin, cout]
      gemm->m = op.shape.dim(0) * op.shape.dim(1) * op.shape.dim(2);
      gemm->k = b.shape.dim(0) * b.shape.dim(1) * b.shape.dim(2);
      gemm->n = b.shape.dim(3);
      break;
    case OpKind::kConv2DBackpropInput:  // dy [rows, cout] · filterᵀ [cout, fh·fw·cin], col2im
      gemm->m = b.shape.dim(0) * b.shape.dim(1) * b.shape.dim(2);
      gemm->k = b.shape.dim(3);
      gemm->n = a.shape.dim(0) * a.shape.dim(1) * a.shape.dim(2);
      break;
    case OpKind::kConv2DBackpropFilter:  // colᵀ [fh·fw·cin, rows] · dy [rows, cout]
      gemm->m = op.shape.dim(0) * op.shape.dim(1) * op.shape.dim(2);
      gemm->k = b.shape.dim(0) * b.shape.dim(1) * b.shape.dim(2);
      gemm->n = op.shape.dim(3);
      break;
    default:
      break;
  }
}

double VpuOpsPerElement(OpKind kind) {
  switch (kind) {
    case OpKind::kDiv:
    case OpKind::kRsqrt:
      return kVpuOpsDivide;
    case OpKind::kExp:
    case OpKind::kLog:
    case OpKind::kTanh:
      return kVpuOpsTranscendental;
    case OpKind::kGelu:  // tanh + 6 mul/add
      return kVpuOpsTranscendental + 6 * kVpuOpsElementwise;
    case OpKind::kGeluGrad:
      return kVpuOpsTranscendental + 12 * kVpuOpsElementwise;
    case OpKind::kReluGrad:
      return 2 * kVpuOpsElementwise;
    case OpKind::kReduce:
      return kVpuOpsReduce;
    case OpKind::kSoftmax:  // max-reduce, sub, exp, sum-reduce, divide
    case OpKind::kSoftmaxCrossEntropy:
    case OpKind::kSoftmaxCrossEntropyGrad:
      return 2 * kVpuOpsReduce + kVpuOpsTranscendental + kVpuOpsDivide + kVpuOpsElementwise;
    default:
      return kVpuOpsElementwise;
  }
}

double PeakFlopsPerCycle(const ChipSpec& spec, int tensorcores) {
  return 2.0 * spec.mxus_per_tensorcore * spec.mxu_dim * spec.mxu_dim *
         spec.macs_per_cell_per_cycle * tensorcores;
}

OpCost PlanMatmul(const ChipSpec& spec, const Op& op, const Graph& graph,
                  const CompileOptions& options, OpPlan* plan) {
  MatmulGemm(op, graph, &plan->batch, &plan->gemm);
  const int passes = MxuPasses(options.precision);
  const int bytes = op.dtype == DType::kBF16 && options.precision == Precision::kDefault ? 2 : 4;
  const int tc = options.tensorcores;
  OpCost rows = DotCost(spec, plan->batch, plan->gemm, passes, bytes, tc, options.timing_mode,
                        options.dataflow);
  plan->split = tc > 1 ? SplitKind::kRows : SplitKind::kNone;
  if (tc == 1 || plan->gemm.k < 2 * tc) return rows;
  // The alternative XLA also weighs: split K, then all-reduce the f32 partial results.
  GemmShape part = plan->gemm;
  part.k = (plan->gemm.k + tc - 1) / tc;
  OpCost k_split =
      DotCost(spec, plan->batch, part, passes, bytes, 1, options.timing_mode, options.dataflow);
  const double result_bytes = static_cast<double>(plan->batch) * plan->gemm.m * plan->gemm.n * 4.0;
  k_split.collective_cycles = AllReduceCycles(spec, result_bytes, tc);
  k_split.cycles =
      std::max(k_split.compute_cycles, k_split.memory_cycles) + k_split.collective_cycles;
  if (k_split.cycles >= rows.cycles) return rows;
  k_split.flops = rows.flops;
  k_split.hbm_bytes *= tc;
  k_split.folds *= tc;
  k_split.tensorcores_used = tc;
  k_split.seconds = static_cast<double>(k_split.cycles) / spec.clock_hz;
  k_split.mxu_utilization =
      k_split.cycles > 0 ? k_split.flops / (k_split.cycles * PeakFlopsPerCycle(spec, tc)) : 0;
  if (k_split.collective_cycles > std::max(k_split.compute_cycles, k_split.memory_cycles)) {
    k_split.bound = "collective";
  }
  plan->split = SplitKind::kContraction;
  return k_split;
}

OpCost PlanVector(const ChipSpec& spec, const Op& op, const Graph& graph,
                  const CompileOptions& options) {
  if (op.kind == OpKind::kParameter || op.kind == OpKind::kConstant ||
      op.kind == OpKind::kReshape) {
    return OpCost{.bound = "memory"};  // already in HBM / a bitcast: no work
  }
  double bytes = static_cast<double>(op.shape.NumElements()) * DTypeBytes(op.dtype);
  int64_t elements = op.shape.NumElements();
  for (int in : op.input_index) {
    const Op& x = graph.ops()[static_cast<size_t>(in)];
    bytes += static_cast<double>(x.shape.NumElements()) * DTypeBytes(x.dtype);
    elements = std::max(elements, x.shape.NumElements());
  }
  return VectorCost(spec, elements, VpuOpsPerElement(op.kind), bytes, options.tensorcores);
}

}  // namespace

std::string_view SplitKindName(SplitKind split) {
  switch (split) {
    case SplitKind::kNone:
      return "none";
    case SplitKind::kRows:
      return "rows";
    case SplitKind::kContraction:
      return "contraction";
  }
  return "?";
}

std::string StructureKey(const Graph& graph) {
  std::string s;
  s.reserve(graph.ops().size() * 48);
  for (const Op& op : graph.ops()) {
    const OpAttrs& a = op.attrs;
    s += OpKindName(op.kind);
    s += ' ';
    s += op.id;
    s += '(';
    for (int in : op.input_index) s += std::to_string(in) + ',';
    s += ')';
    s += ShapeString(op.dtype, op.shape);
    // Attributes that change the computation; Init (values, seeds) is data and left out.
    s += '{';
    AppendDims(s, a.shape.dims);
    s += std::to_string(static_cast<int>(a.dtype)) + (a.transpose_lhs ? "T" : "N") +
         (a.transpose_rhs ? "T" : "N");
    s += std::to_string(a.conv.stride_h) + ',' + std::to_string(a.conv.stride_w) + ',' +
         std::to_string(static_cast<int>(a.conv.padding));
    for (int64_t p : a.conv.pads) s += ',' + std::to_string(p);
    s += std::to_string(static_cast<int>(a.reduce)) + (a.keep_dims ? "k" : "-");
    AppendDims(s, a.axes);
    if (a.broadcast_dims) AppendDims(s, *a.broadcast_dims);
    AppendDims(s, a.perm);
    s += std::to_string(a.axis);
    AppendDims(s, a.start);
    AppendDims(s, a.limit);
    s += "}\n";
  }
  s += "->";
  for (const auto& out : graph.outputs()) s += out + ',';
  return s;
}

uint64_t HashKey(std::string_view key) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a 64
  for (unsigned char c : key) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

Status ValidateOptions(const Slice& slice, const CompileOptions& options) {
  if (options.tensorcores < 1 || options.tensorcores > slice.tensorcores()) {
    return Status::InvalidArgument(
        "tensorcores must be in [1, " + std::to_string(slice.tensorcores()) + "] for " +
        slice.type().name + ", got " + std::to_string(options.tensorcores));
  }
  if (options.max_tensor_elements < 1) {
    return Status::InvalidArgument("max_tensor_elements must be >= 1");
  }
  return Status::Ok();
}

namespace {

// Compile, and with `lower` also CompileToRun's lowering and host-memory plan.
Result<std::shared_ptr<const CompiledProgram>> Build(const Graph& graph, const Slice& slice,
                                                     const CompileOptions& options, bool lower) {
  const auto start = std::chrono::steady_clock::now();
  TPUEMU_RETURN_IF_ERROR(graph.status());
  TPUEMU_RETURN_IF_ERROR(ValidateOptions(slice, options));
  if (graph.ops().empty()) return Status::InvalidArgument("program has no ops");
  if (graph.outputs().empty()) return Status::InvalidArgument("program has no outputs");
  const ChipSpec& spec = slice.spec();
  const auto& ops = graph.ops();
  const int n = static_cast<int>(ops.size());

  auto program = std::make_shared<CompiledProgram>();
  program->name = graph.name();
  program->structure_key = StructureKey(graph);
  program->structure_hash = HashKey(program->structure_key);
  program->options = options;
  program->generation = spec.generation;
  program->accelerator_type = slice.type().name;
  program->gemm_kernel = GemmKernelName();
  program->outputs = graph.outputs();
  program->plans.resize(static_cast<size_t>(n));

  for (int i = 0; i < n; ++i) {
    const Op& op = ops[static_cast<size_t>(i)];
    TPUEMU_RETURN_IF_ERROR(CheckShape(op.shape, options.max_tensor_elements,
                                      std::string(OpKindName(op.kind)) + " \"" + op.id + "\""));
    OpPlan& plan = program->plans[static_cast<size_t>(i)];
    plan.op_index = i;
    plan.id = op.id;
    plan.kind = op.kind;
    plan.on_mxu = IsMatmulOp(op.kind);
    plan.result_bytes = op.shape.NumElements() * DTypeBytes(op.dtype);
    plan.cost = plan.on_mxu ? PlanMatmul(spec, op, graph, options, &plan)
                            : PlanVector(spec, op, graph, options);
    if (!plan.on_mxu && options.tensorcores > 1 && plan.cost.tensorcores_used > 1) {
      plan.split = SplitKind::kRows;
    }
    // Liveness: leaves live all program; a result lives until its last reader.
    plan.last_use = op.kind == OpKind::kParameter || op.kind == OpKind::kConstant ? n : i;
    for (int in : op.input_index) {
      auto& producer = program->plans[static_cast<size_t>(in)];
      producer.last_use = std::max(producer.last_use, i);
    }
    ProgramTotals& t = program->totals;
    t.cycles += plan.cost.cycles;
    t.flops += plan.cost.flops;
    t.hbm_bytes += plan.cost.hbm_bytes;
  }
  for (const auto& out : graph.outputs()) {
    program->plans[static_cast<size_t>(graph.IndexOf(out))].last_use = n;
  }
  ProgramTotals& t = program->totals;
  t.seconds = static_cast<double>(t.cycles) / spec.clock_hz;
  t.mxu_utilization =
      t.cycles > 0 ? t.flops / (t.cycles * PeakFlopsPerCycle(spec, options.tensorcores)) : 0;

  // Peak live bytes: a sweep over allocation (at the producer) and release (after last use).
  const int64_t tc = options.tensorcores;
  std::vector<int64_t> release(static_cast<size_t>(n) + 1, 0);
  int64_t live = 0, peak = 0;
  for (int i = 0; i < n; ++i) {
    const OpPlan& plan = program->plans[static_cast<size_t>(i)];
    const int64_t per_tc = (plan.result_bytes + tc - 1) / tc;
    live += per_tc;
    release[static_cast<size_t>(plan.last_use)] += per_tc;
    if (live > peak) {
      peak = live;
      program->peak_op_index = i;
    }
    live -= release[static_cast<size_t>(i)];
  }
  program->peak_hbm_bytes_per_tensorcore = peak;
  program->hbm_capacity_bytes_per_tensorcore = spec.HbmBytesPerTensorCore();
  const double capacity = program->hbm_capacity_bytes_per_tensorcore;
  if (static_cast<double>(peak) > capacity) {
    const int at = program->peak_op_index;
    std::vector<const OpPlan*> alive;
    for (const auto& plan : program->plans) {
      if (plan.op_index <= at && plan.last_use >= at) alive.push_back(&plan);
    }
    std::sort(alive.begin(), alive.end(),
              [](const OpPlan* a, const OpPlan* b) { return a->result_bytes > b->result_bytes; });
    std::string msg =
        "XLA:TPU compile permanent error. Ran out of memory in memory space hbm. Used " +
        Gib(static_cast<double>(peak)) + " of " + Gib(capacity) +
        " hbm. Exceeded hbm capacity by " + Gib(static_cast<double>(peak) - capacity) +
        ". Largest live tensors at op '" + ops[static_cast<size_t>(at)].id +
        "' (per TensorCore of " + std::to_string(tc) + "):";
    for (size_t i = 0; i < alive.size() && i < 5; ++i) {
      const Op& op = ops[static_cast<size_t>(alive[i]->op_index)];
      msg += std::string(i ? "," : "") + " '" + op.id + "' " + ShapeString(op.dtype, op.shape) +
             " " + Gib(static_cast<double>((alive[i]->result_bytes + tc - 1) / tc));
    }
    return Status::ResourceExhausted(msg);
  }
  if (lower) {
    Result<std::shared_ptr<const hlo::HloGraphProgram>> lowered =
        hlo::HloGraphProgram::Lower(graph);
    if (!lowered.ok()) return lowered.status();
    program->lowered = std::move(*lowered);
    program->peak_host_bytes = hlo::PeakHostBytes(program->lowered->module(), options.precision);
  }
  program->compile_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return std::shared_ptr<const CompiledProgram>(std::move(program));
}

}  // namespace

Result<std::shared_ptr<const CompiledProgram>> Compile(const Graph& graph, const Slice& slice,
                                                       const CompileOptions& options) {
  return Build(graph, slice, options, /*lower=*/false);
}

Result<std::shared_ptr<const CompiledProgram>> CompileToRun(const Graph& graph, const Slice& slice,
                                                            const CompileOptions& options) {
  return Build(graph, slice, options, /*lower=*/true);
}

}  // namespace tpuemu::engine
