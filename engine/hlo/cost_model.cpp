#include "engine/hlo/cost_model.h"

#include <algorithm>
#include <limits>
#include <set>

#include "engine/hlo/cost_model_internal.h"

namespace tpuemu::engine::hlo {
namespace internal {
namespace {

class Pricer {
 public:
  Pricer(const PriceContext& ctx, ModuleCost& out) : ctx_(ctx), out_(out) {}

  // Adds the rows of computation `index` run `count` times (static mode) and returns the cycles;
  // `record` false only measures (to pick a conditional's dearest branch).
  int64_t Visit(int index, int64_t count, bool record) {
    const Computation& comp = ctx_.module.computations[static_cast<size_t>(index)];
    const std::vector<bool> fused = FusedProducers(ctx_.module, comp);
    // A computation reached twice gets a row per visit where a run's counts give one.
    if (record && !visited_.insert(index).second) counts_exact = false;
    int64_t total = 0;
    for (size_t i = 0; i < comp.instructions.size(); ++i) {
      const Instruction& inst = comp.instructions[i];
      if (inst.opcode == Opcode::kWhile) {
        int64_t trips = TripCount(ctx_.module, comp, inst);
        if (trips < 0) {
          trips = 1;
          counts_exact = false;
          if (record) {
            out_.warnings.push_back("trip count of " + inst.Describe() +
                                    " is unknown; its body is priced once per step");
          }
        }
        total += Visit(inst.called[0], count * (trips + 1), record);
        total += Visit(inst.called[1], count * trips, record);
        continue;
      }
      if (inst.opcode == Opcode::kConditional) {
        counts_exact = false;  // the dearest branch stands in for the one a run takes
        int best = inst.called[0];
        int64_t best_cycles = -1;
        for (int c : inst.called) {
          const int64_t cycles = Visit(c, 1, false);
          if (cycles > best_cycles) {
            best_cycles = cycles;
            best = c;
          }
        }
        total += Visit(best, count, record);
        continue;
      }
      if (inst.opcode == Opcode::kCall || inst.opcode == Opcode::kAsyncStart) {
        total += Visit(inst.called[0], count, record);
        continue;
      }
      total += Row(index, comp, static_cast<int>(i), fused, count, record);
    }
    return total;
  }

  // Run mode: the evaluator's counts, every computation the entry reaches through control flow
  // visited once.
  void VisitCounted(int index, std::set<int>& seen) {
    if (!seen.insert(index).second) return;
    const Computation& comp = ctx_.module.computations[static_cast<size_t>(index)];
    const std::vector<bool> fused = FusedProducers(ctx_.module, comp);
    const std::vector<int64_t>& counts = ctx_.options.executions[static_cast<size_t>(index)];
    for (size_t i = 0; i < comp.instructions.size(); ++i) {
      const Instruction& inst = comp.instructions[i];
      if (IsControlFlow(inst.opcode)) {
        for (int c : inst.called) VisitCounted(c, seen);
        continue;
      }
      if (counts[i] > 0) Row(index, comp, static_cast<int>(i), fused, counts[i], true);
    }
  }

  std::vector<std::string> unsupported;
  bool counts_exact = true;  // static mode: see ModuleCost::counts_exact

 private:
  int64_t Row(int index, const Computation& comp, int i, const std::vector<bool>& fused,
              int64_t count, bool record) {
    const Instruction& inst = comp.instructions[static_cast<size_t>(i)];
    const ComputeCost c = PriceCompute(ctx_, comp, inst);
    if (c.free) return 0;
    if (!c.supported) {
      if (record) {
        unsupported.push_back("%" + inst.name + " (" + inst.Unsupported() + ", line " +
                              std::to_string(inst.line) + ")");
      }
      if (inst.opcode != Opcode::kFusion) return 0;
    }
    InstructionCost row;
    row.computation = index;
    row.instruction = i;
    row.name = inst.name;
    row.opcode = std::string(OpcodeName(inst.opcode));
    row.op_name = inst.op_name;
    row.unit = c.unit;
    row.count = count;
    row.compute_cycles = c.compute_cycles;
    row.collective_cycles = c.collective_cycles;
    row.hbm_bytes = Traffic(comp, i, fused);
    row.memory_cycles = HbmCycles(ctx_.spec, row.hbm_bytes, ctx_.tensorcores);
    row.cycles = std::max(row.compute_cycles, row.memory_cycles) + row.collective_cycles;
    row.flops = c.flops;
    row.mxu_flops = c.mxu_flops;
    row.passes = c.passes;
    row.folds = c.folds;
    row.split = c.split;
    row.gemm_batch = c.gemm_batch;
    row.gemm = c.gemm;
    row.bound = BoundName(row.compute_cycles, row.memory_cycles, row.collective_cycles);
    if (record) {
      out_.cycles += row.cycles * count;
      out_.flops += row.flops * static_cast<double>(count);
      out_.mxu_flops += c.mxu_flops * static_cast<double>(count);
      out_.hbm_bytes += row.hbm_bytes * static_cast<double>(count);
      out_.rows.push_back(std::move(row));
      return out_.rows.back().cycles * count;
    }
    return row.cycles * count;
  }

  const PriceContext& ctx_;
  ModuleCost& out_;
  std::set<int> visited_;  // computations Visit recorded
};

}  // namespace
}  // namespace internal

namespace {

// TensorCores one JAX device has on this generation (2 on v4 and v5p, else 1).
int TensorCoresPerDevice(const ChipSpec& spec) {
  return spec.generation == Generation::kV4 || spec.generation == Generation::kV5p ? 2 : 1;
}

}  // namespace

Result<ModuleCost> PriceModule(const Module& module, const Slice& slice,
                               const CostOptions& options) {
  const ChipSpec& spec = slice.spec();
  if (options.tensorcores < 0 || options.tensorcores > slice.tensorcores()) {
    return Status::InvalidArgument(
        "tensorcores must be in [1, " + std::to_string(slice.tensorcores()) + "] for " +
        slice.type().name + ", got " + std::to_string(options.tensorcores));
  }
  const int tcs = options.tensorcores > 0 ? options.tensorcores : TensorCoresPerDevice(spec);
  const int64_t available = slice.tensorcores() / tcs;
  if (module.devices() > available) {
    return Status::InvalidArgument(
        "the module runs on " + std::to_string(module.devices()) + " devices (replica_count " +
        std::to_string(module.replica_count) + " x num_partitions " +
        std::to_string(module.num_partitions) + "); " + slice.type().name + " has " +
        std::to_string(available) + " (" + std::to_string(tcs) + " TensorCore(s) each)");
  }
  for (const Computation& comp : module.computations) {
    for (const Instruction& inst : comp.instructions) {
      TPUEMU_RETURN_IF_ERROR(
          ValidateStatic(inst.shape, std::numeric_limits<int64_t>::max(), inst.Describe()));
    }
  }
  if (!options.executions.empty() && options.executions.size() != module.computations.size()) {
    return Status::InvalidArgument("execution counts do not belong to this module");
  }
  ModuleCost out;
  out.module = module.name;
  out.accelerator_type = slice.type().name;
  out.devices = static_cast<int>(module.devices());
  out.tensorcores_per_device = tcs;
  out.clock_hz = spec.clock_hz;
  const internal::PriceContext ctx{module, spec, slice.type(), tcs, options};
  internal::Pricer pricer(ctx, out);
  if (options.executions.empty()) {
    pricer.Visit(module.entry, 1, true);
    out.counts_exact = pricer.counts_exact;
  } else {
    std::set<int> seen;
    pricer.VisitCounted(module.entry, seen);
  }
  if (!pricer.unsupported.empty()) {
    std::string list;
    for (size_t i = 0; i < pricer.unsupported.size() && i < 10; ++i) {
      list += (i > 0 ? "; " : "") + pricer.unsupported[i];
    }
    if (pricer.unsupported.size() > 10) list += "; ...";
    if (!options.allow_unsupported) {
      return Status::Unimplemented("cannot price " + std::to_string(pricer.unsupported.size()) +
                                   " instruction(s): " + list +
                                   " (allow unsupported instructions to price them at zero)");
    }
    out.warnings.push_back("priced at zero: " + list);
  }
  out.seconds = static_cast<double>(out.cycles) / spec.clock_hz;
  const double peak_per_cycle = PeakFlopsPerCycle(spec, tcs);
  out.mxu_utilization =
      out.cycles > 0
          ? std::min(1.0, out.mxu_flops / (static_cast<double>(out.cycles) * peak_per_cycle))
          : 0.0;
  std::vector<int64_t> memo(module.computations.size(), -1);
  internal::PeakAt at;
  const int64_t peak = internal::PeakBytes(module, module.entry, memo, &at);
  out.peak_instruction = at.instruction;
  out.peak_live = std::move(at.live);
  out.peak_hbm_bytes_per_tensorcore = (peak + tcs - 1) / tcs;
  out.hbm_capacity_bytes_per_tensorcore = spec.HbmBytesPerTensorCore();
  out.fits = static_cast<double>(out.peak_hbm_bytes_per_tensorcore) <=
             out.hbm_capacity_bytes_per_tensorcore;
  return out;
}

}  // namespace tpuemu::engine::hlo
