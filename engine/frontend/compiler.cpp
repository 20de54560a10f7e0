#include "engine/frontend/compiler.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "engine/frontend/graph_program.h"
#include "engine/hardware/hardware.h"
#include "engine/hlo/cost_model.h"
#include "engine/hlo/host_memory.h"
#include "engine/kernels/gemm.h"

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

}  // namespace

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

// The graph op an instruction of its lowering belongs to (op_lowering.cpp names each
// instruction's metadata op_name "<graph>/<op id>"); -1 for none.
int OpIndexOf(const Graph& graph, const std::string& op_name) {
  const std::string& prefix = graph.name();
  if (op_name.size() <= prefix.size() + 1 || op_name.compare(0, prefix.size(), prefix) != 0 ||
      op_name[prefix.size()] != '/') {
    return -1;
  }
  return graph.IndexOf(op_name.substr(prefix.size() + 1));
}

// Adds one priced instruction (`row.count` executions) to its op's plan.
void AddRow(const hlo::InstructionCost& row, OpPlan& plan) {
  OpCost& c = plan.cost;
  c.cycles += row.cycles * row.count;
  c.compute_cycles += row.compute_cycles * row.count;
  c.memory_cycles += row.memory_cycles * row.count;
  c.collective_cycles += row.collective_cycles * row.count;
  c.flops += row.flops * static_cast<double>(row.count);
  c.hbm_bytes += row.hbm_bytes * static_cast<double>(row.count);
  c.folds += row.folds * row.count;
  if (row.unit == "mxu") {
    plan.batch = row.gemm_batch;
    plan.gemm = row.gemm;
    plan.split = row.split;
  }
}

void FinishPlan(const ChipSpec& spec, int tensorcores, OpPlan& plan) {
  OpCost& c = plan.cost;
  c.seconds = static_cast<double>(c.cycles) / spec.clock_hz;
  c.tensorcores_used = c.cycles > 0 ? tensorcores : 0;
  if (!plan.on_mxu && tensorcores > 1 && c.cycles > 0) plan.split = SplitKind::kRows;
  c.mxu_utilization = plan.on_mxu && c.cycles > 0
                          ? std::min(1.0, c.flops / (static_cast<double>(c.cycles) *
                                                     PeakFlopsPerCycle(spec, tensorcores)))
                          : 0;
  // An op with no work (a parameter, a constant, a reshape: a bitcast) is already in HBM.
  c.bound =
      c.cycles == 0 ? "memory" : BoundName(c.compute_cycles, c.memory_cycles, c.collective_cycles);
}

// XLA's out-of-memory text, naming the graph ops whose results are live at the peak.
Status OutOfHbm(const Graph& graph, const hlo::Module& module, const hlo::ModuleCost& cost,
                int tensorcores) {
  const hlo::Computation& entry = module.entry_computation();
  auto name_of = [&](int instruction) {
    const hlo::Instruction& inst = entry.instructions[static_cast<size_t>(instruction)];
    const int op = OpIndexOf(graph, inst.op_name);
    return op >= 0 ? graph.ops()[static_cast<size_t>(op)].id : "%" + inst.name;
  };
  const double peak = static_cast<double>(cost.peak_hbm_bytes_per_tensorcore);
  const double capacity = cost.hbm_capacity_bytes_per_tensorcore;
  std::string msg =
      "XLA:TPU compile permanent error. Ran out of memory in memory space hbm. Used " + Gib(peak) +
      " of " + Gib(capacity) + " hbm. Exceeded hbm capacity by " + Gib(peak - capacity) +
      ". Largest live tensors at op '" + name_of(cost.peak_instruction) + "' (per TensorCore of " +
      std::to_string(tensorcores) + "):";
  for (size_t i = 0; i < cost.peak_live.size() && i < 5; ++i) {
    const hlo::Instruction& inst = entry.instructions[static_cast<size_t>(cost.peak_live[i])];
    const int64_t bytes = (inst.shape.ByteSize() + tensorcores - 1) / tensorcores;
    msg += std::string(i ? "," : "") + " '" + name_of(cost.peak_live[i]) + "' " +
           inst.shape.ToString() + " " + Gib(static_cast<double>(bytes));
  }
  return Status::ResourceExhausted(msg);
}

}  // namespace

Result<std::shared_ptr<const CompiledProgram>> Compile(const Graph& graph, const Slice& slice,
                                                       const CompileOptions& options) {
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
    // Liveness: leaves live all program; a result lives until its last reader.
    plan.last_use = op.kind == OpKind::kParameter || op.kind == OpKind::kConstant ? n : i;
    for (int in : op.input_index) {
      auto& producer = program->plans[static_cast<size_t>(in)];
      producer.last_use = std::max(producer.last_use, i);
    }
  }
  for (const auto& out : graph.outputs()) {
    program->plans[static_cast<size_t>(graph.IndexOf(out))].last_use = n;
  }

  Result<std::shared_ptr<const hlo::HloGraphProgram>> lowered = hlo::HloGraphProgram::Lower(graph);
  if (!lowered.ok()) return lowered.status();
  const hlo::Module& module = (*lowered)->module();
  hlo::CostOptions cost_options;
  cost_options.precision = options.precision;
  cost_options.timing_mode = options.timing_mode;
  cost_options.dataflow = options.dataflow;
  cost_options.tensorcores = options.tensorcores;
  Result<hlo::ModuleCost> cost = hlo::PriceModule(module, slice, cost_options);
  if (!cost.ok()) return cost.status();
  for (const hlo::InstructionCost& row : cost->rows) {
    const int op = OpIndexOf(graph, row.op_name);
    if (op >= 0) AddRow(row, program->plans[static_cast<size_t>(op)]);
  }
  for (OpPlan& plan : program->plans) FinishPlan(spec, options.tensorcores, plan);
  program->totals = {.cycles = cost->cycles,
                     .seconds = cost->seconds,
                     .flops = cost->flops,
                     .hbm_bytes = cost->hbm_bytes,
                     .mxu_utilization = cost->mxu_utilization};
  program->peak_hbm_bytes_per_tensorcore = cost->peak_hbm_bytes_per_tensorcore;
  program->hbm_capacity_bytes_per_tensorcore = cost->hbm_capacity_bytes_per_tensorcore;
  const hlo::Instruction& at =
      module.entry_computation().instructions[static_cast<size_t>(cost->peak_instruction)];
  program->peak_op_index = std::max(OpIndexOf(graph, at.op_name), 0);
  if (!cost->fits) return OutOfHbm(graph, module, *cost, options.tensorcores);
  program->lowered = std::move(*lowered);
  program->peak_host_bytes = hlo::PeakHostBytes(module, options.precision);
  program->compile_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return std::shared_ptr<const CompiledProgram>(std::move(program));
}

}  // namespace tpuemu::engine
