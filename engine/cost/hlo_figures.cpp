// FiguresFromHloModule (program_profile.h): an HLO module's cost rows (engine/hlo/cost_model.h)
// as the figures of a comparison source.
#include <algorithm>
#include <bit>
#include <functional>
#include <utility>

#include "engine/cost/program_profile.h"
#include "engine/hlo/cost_model.h"

namespace tpuemu::engine::cost {
namespace {

using hlo::Computation;
using hlo::Instruction;
using hlo::Module;
using hlo::Shape;

// A slice of the megacore generation with a chip per device (the figures do not depend on it).
Result<Slice> PricingSlice(int64_t devices) {
  const uint64_t chips = std::bit_ceil(static_cast<uint64_t>(std::max<int64_t>(devices, 4)));
  return Slice::FromAcceleratorType("v5p-" + std::to_string(2 * chips));
}

std::vector<const Shape*> Leaves(const Shape& shape) {
  std::vector<const Shape*> leaves;
  hlo::CollectLeaves(shape, leaves);
  return leaves;
}

// Entry parameter leaves, each marked a weight or data. A training step returns its weights
// updated, in their order: walking the output leaves, each takes the next parameter leaf of its
// type and dims (after the last one taken) as a weight. With none (inference), every leaf but
// the last array of rank >= 1 is a weight: JAX passes the batch after the weights (`f(params, x)`).
struct ParameterLeaf {
  int parameter = 0;
  const Shape* shape = nullptr;
  bool weight = false;
};

std::vector<ParameterLeaf> ClassifyParameters(const Module& module, bool* training) {
  const Computation& entry = module.entry_computation();
  std::vector<ParameterLeaf> leaves;
  for (size_t p = 0; p < entry.parameters.size(); ++p) {
    const Instruction& param = entry.instructions[static_cast<size_t>(entry.parameters[p])];
    for (const Shape* s : Leaves(param.shape)) {
      if (s->IsArray()) leaves.push_back({static_cast<int>(p), s, false});
    }
  }
  *training = false;
  size_t next = 0;
  for (const Shape* out : Leaves(entry.instructions[static_cast<size_t>(entry.root)].shape)) {
    for (size_t i = next; out->IsArray() && i < leaves.size(); ++i) {
      if (leaves[i].shape->type != out->type || leaves[i].shape->dims != out->dims) continue;
      leaves[i].weight = true;
      *training = true;
      next = i + 1;
      break;
    }
  }
  if (!*training) {
    int data = -1;
    for (size_t i = 0; i < leaves.size(); ++i) {
      if (leaves[i].shape->rank() >= 1) data = static_cast<int>(i);
    }
    for (size_t i = 0; i < leaves.size(); ++i) leaves[i].weight = static_cast<int>(i) != data;
  }
  return leaves;
}

// Which rows carry the batch: an entry instruction when one of its operands does (a parameter
// when it holds data); every instruction of a called computation when a caller does (whole
// values: a while loop whose state holds the batch carries it throughout).
class BatchFlow {
 public:
  BatchFlow(const Module& module, const std::vector<bool>& data_parameters)
      : module_(module), state_(module.computations.size(), 0) {
    const Computation& entry = module.entry_computation();
    entry_.assign(entry.instructions.size(), false);
    for (size_t i = 0; i < entry.instructions.size(); ++i) {
      const Instruction& inst = entry.instructions[i];
      bool carries = inst.opcode == hlo::Opcode::kParameter &&
                     data_parameters[static_cast<size_t>(inst.index)];
      for (int o : inst.operands) carries = carries || entry_[static_cast<size_t>(o)];
      entry_[i] = carries;
      for (int c : inst.called) Mark(c, carries);
    }
  }

  bool Carries(const hlo::InstructionCost& row) const {
    if (row.computation == module_.entry) return entry_[static_cast<size_t>(row.instruction)];
    return state_[static_cast<size_t>(row.computation)] == 2;
  }

 private:
  // state_: 0 unvisited, 1 reached without the batch, 2 with it (only ever rises: terminates).
  void Mark(int computation, bool carries) {
    char& state = state_[static_cast<size_t>(computation)];
    const char next = carries ? 2 : 1;
    if (state >= next) return;
    state = next;
    for (const Instruction& inst :
         module_.computations[static_cast<size_t>(computation)].instructions) {
      for (int c : inst.called) Mark(c, carries);
    }
  }

  const Module& module_;
  std::vector<bool> entry_;
  std::vector<char> state_;
};

}  // namespace

Result<ProgramFigures> FiguresFromHloModule(const hlo::Module& module, int64_t batch,
                                            bool allow_unsupported) {
  Result<Slice> slice = PricingSlice(module.devices());
  if (!slice.ok()) return slice.status();
  hlo::CostOptions options;
  options.allow_unsupported = allow_unsupported;
  Result<hlo::ModuleCost> cost = hlo::PriceModule(module, *slice, options);
  if (!cost.ok()) return cost.status();
  const double devices = static_cast<double>(module.devices());

  ProgramFigures f;
  f.name = module.name;
  f.source = "hlo";
  bool training = false;
  const std::vector<ParameterLeaf> leaves = ClassifyParameters(module, &training);
  std::vector<bool> data_parameters(module.entry_computation().parameters.size(), false);
  int64_t leading = 1;
  bool seen_data = false;
  double weight_bytes = 0;
  for (const ParameterLeaf& leaf : leaves) {
    if (leaf.weight) {
      weight_bytes += static_cast<double>(leaf.shape->ByteSize());
      f.parameter_count += static_cast<double>(leaf.shape->ElementCount());
      continue;
    }
    data_parameters[static_cast<size_t>(leaf.parameter)] = true;
    if (!seen_data && leaf.shape->rank() >= 1) {
      leading = leaf.shape->dims[0];
      seen_data = true;
    }
  }
  for (const Computation& comp : module.computations) {
    for (const Instruction& inst : comp.instructions) {
      if (inst.opcode == hlo::Opcode::kConstant && inst.shape.IsArray() && inst.shape.rank() > 0) {
        weight_bytes += static_cast<double>(inst.shape.ByteSize());
        f.parameter_count += static_cast<double>(inst.shape.ElementCount());
      }
    }
  }
  // Every device runs its share of the batch (a module of several devices is taken as data
  // parallel): the global batch and batch-carrying work are the device's times the devices.
  f.global_batch = batch > 0 ? batch : std::max<int64_t>(leading, 1) * module.devices();
  f.parameter_bytes = weight_bytes;
  f.gradient_bytes = training ? weight_bytes : 0;
  const double peak_per_device =
      static_cast<double>(cost->peak_hbm_bytes_per_tensorcore) * cost->tensorcores_per_device;
  f.activation_bytes = std::max(0.0, peak_per_device - weight_bytes) * devices;

  const BatchFlow flow(module, data_parameters);
  for (const hlo::InstructionCost& row : cost->rows) {
    // Collectives are the comparison's to model (gradient_bytes, the strategy); free rows cost 0.
    if (row.unit != "mxu" && row.unit != "vpu") continue;
    const bool carries = flow.Carries(row);
    const double scale = static_cast<double>(row.count) * (carries ? devices : 1.0);
    InstructionCost in{.name = "%" + row.name,
                       .on_mxu = row.unit == "mxu",
                       .flops = row.mxu_flops * scale,
                       .vpu_ops = (row.flops - row.mxu_flops) * scale,
                       .hbm_bytes = row.hbm_bytes * scale,
                       .gemm_batch = row.gemm_batch * row.count,
                       .gemm = row.gemm,
                       .passes = std::max(row.passes, 1),
                       .carries_batch = carries};
    // The devices' rows side by side: one GEMM of `devices` times the rows.
    if (carries) in.gemm.m *= module.devices();
    f.instructions.push_back(std::move(in));
  }
  return f;
}

}  // namespace tpuemu::engine::cost
