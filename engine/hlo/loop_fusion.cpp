#include "engine/hlo/loop_fusion.h"

#include <algorithm>
#include <unordered_map>

#include "engine/hlo/elementwise.h"

namespace tpuemu::engine::hlo::internal {
namespace {

// Below this many elements a loop of separate kernels costs no more than the fused one.
constexpr int64_t kMinFusedElements = 4096;
// Elements per block: a register holds one block (2 KiB). Members share registers once their
// value is dead, so a group's few live registers stay in L1 while it runs, and a block is long
// enough that the per-call cost of each member's kernel is small beside its loop.
constexpr int64_t kBlock = 512;

bool IsF32(const Shape& s) { return !s.IsTuple() && s.type == PrimitiveType::kF32; }

const Instruction& Operand(const Computation& comp, const Instruction& inst, size_t j) {
  return comp.instructions[static_cast<size_t>(inst.operands[j])];
}

// A broadcast of an f32 scalar, or of an f32 array along trailing dims (a softmax's row max):
// fused members read it as a register filled per block, element k holding operand[k / inner].
bool IsSplat(const Computation& comp, const Instruction& inst) {
  if (inst.opcode != Opcode::kBroadcast || !IsF32(inst.shape)) return false;
  const Shape& from = Operand(comp, inst, 0).shape;
  if (!IsF32(from) || from.dims.size() > inst.shape.dims.size()) return false;
  for (size_t d = 0; d < from.dims.size(); ++d) {
    if (inst.dimensions.size() != from.dims.size() ||
        inst.dimensions[d] != static_cast<int64_t>(d) || from.dims[d] != inst.shape.dims[d]) {
      return false;
    }
  }
  return true;
}

// Whether inst can be a member of a fused loop: an elementwise f32 op over a large array.
bool IsLoopOp(const Computation& comp, const Instruction& inst) {
  if (inst.shape.IsTuple() || Product(inst.shape.dims) < kMinFusedElements) return false;
  const Opcode op = inst.opcode;
  auto f32_operands = [&](size_t from) {
    for (size_t j = from; j < inst.operands.size(); ++j) {
      if (!IsF32(Operand(comp, inst, j).shape)) return false;
    }
    return true;
  };
  if (op == Opcode::kCompare) {
    return inst.shape.type == PrimitiveType::kPred && f32_operands(0) &&
           inst.a().compare_type != CompareType::kTotalOrder;
  }
  if (op == Opcode::kSelect) {
    const Shape& pred = Operand(comp, inst, 0).shape;
    return IsF32(inst.shape) && pred.type == PrimitiveType::kPred && pred.dims == inst.shape.dims &&
           f32_operands(1);
  }
  if ((IsElementwiseUnary(op) && op != Opcode::kIsFinite) || IsElementwiseBinary(op)) {
    return IsF32(inst.shape) && f32_operands(0);
  }
  return false;
}

}  // namespace

LoopFusionPlan PlanLoopFusion(const Computation& comp, bool fuse) {
  const int n = static_cast<int>(comp.instructions.size());
  LoopFusionPlan plan;
  plan.group_of.assign(static_cast<size_t>(n), -1);
  plan.unmaterialised.assign(static_cast<size_t>(n), false);
  std::vector<bool> open;
  auto inst_at = [&](int i) -> const Instruction& {
    return comp.instructions[static_cast<size_t>(i)];
  };
  for (int i = 0; i < n; ++i) {
    const Instruction& inst = inst_at(i);
    if (fuse && IsLoopOp(comp, inst)) {
      int joined = -1;
      for (int o : inst.operands) {
        const int g = plan.group_of[static_cast<size_t>(o)];
        if (g < 0 || g == joined || !open[static_cast<size_t>(g)] ||
            plan.groups[static_cast<size_t>(g)].dims != inst.shape.dims) {
          continue;
        }
        if (joined < 0) {
          joined = g;
          continue;
        }
        // Two open groups meet here (a GELU gradient's branches): one group. Nothing outside
        // either has read a member yet, so both can run here; members stay in text order.
        LoopGroup& into = plan.groups[static_cast<size_t>(joined)];
        LoopGroup& from = plan.groups[static_cast<size_t>(g)];
        for (int m : from.members) plan.group_of[static_cast<size_t>(m)] = joined;
        into.members.insert(into.members.end(), from.members.begin(), from.members.end());
        std::sort(into.members.begin(), into.members.end());
        from.members.clear();
        open[static_cast<size_t>(g)] = false;
      }
      if (joined < 0) {
        joined = static_cast<int>(plan.groups.size());
        plan.groups.push_back(LoopGroup{inst.shape.dims, {}, -1, {}});
        open.push_back(true);
      }
      plan.groups[static_cast<size_t>(joined)].members.push_back(i);
      plan.group_of[static_cast<size_t>(i)] = joined;
    }
    // A group read from outside must run before this instruction: nothing more joins it.
    for (int o : inst.operands) {
      const int g = plan.group_of[static_cast<size_t>(o)];
      if (g >= 0 && g != plan.group_of[static_cast<size_t>(i)])
        open[static_cast<size_t>(g)] = false;
    }
  }
  // A lone member pays off only when it reads a broadcast (no array of it then).
  for (LoopGroup& g : plan.groups) {
    if (g.members.size() != 1) continue;
    const Instruction& inst = inst_at(g.members[0]);
    const bool reads_splat = std::any_of(inst.operands.begin(), inst.operands.end(),
                                         [&](int o) { return IsSplat(comp, inst_at(o)); });
    if (!reads_splat) {
      plan.group_of[static_cast<size_t>(g.members[0])] = -1;
      g.members.clear();
    }
  }
  // Users outside a group (another group counts as outside); the root is read by the caller.
  std::vector<bool> read_outside(static_cast<size_t>(n), false);
  read_outside[static_cast<size_t>(comp.root)] = true;
  for (int i = 0; i < n; ++i) {
    for (int o : inst_at(i).operands) {
      const int g = plan.group_of[static_cast<size_t>(o)];
      if (g < 0 || g != plan.group_of[static_cast<size_t>(i)]) {
        read_outside[static_cast<size_t>(o)] = true;
      }
    }
  }
  for (int i = 0; i < n; ++i) {
    if (!IsSplat(comp, inst_at(i)) || i == comp.root) continue;
    bool only_fused = true;
    for (int u = i + 1; u < n && only_fused; ++u) {
      const Instruction& user = inst_at(u);
      if (std::find(user.operands.begin(), user.operands.end(), i) != user.operands.end()) {
        only_fused = plan.group_of[static_cast<size_t>(u)] >= 0;
      }
    }
    plan.unmaterialised[static_cast<size_t>(i)] = only_fused;
  }
  for (LoopGroup& g : plan.groups) {
    if (g.members.empty()) continue;
    g.at = g.members.back();
    for (int m : g.members) {
      if (read_outside[static_cast<size_t>(m)]) g.outputs.push_back(m);
    }
  }
  // Last uses: a member reads its operands where its group runs; a member reading an
  // unmaterialised broadcast reads the broadcast's scalar there.
  plan.last_use.assign(static_cast<size_t>(n), -1);
  auto use = [&](int value, int at) {
    int& last = plan.last_use[static_cast<size_t>(value)];
    last = std::max(last, at);
  };
  for (int i = 0; i < n; ++i) {
    const int g = plan.group_of[static_cast<size_t>(i)];
    const int at = g >= 0 ? plan.groups[static_cast<size_t>(g)].at : i;
    for (int o : inst_at(i).operands) {
      use(o, at);
      if (plan.unmaterialised[static_cast<size_t>(o)]) use(inst_at(o).operands[0], at);
    }
  }
  plan.last_use[static_cast<size_t>(comp.root)] = n;
  plan.released_after.resize(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    const int last = plan.last_use[static_cast<size_t>(i)];
    if (last >= 0 && last < n) plan.released_after[static_cast<size_t>(last)].push_back(i);
  }
  return plan;
}

Result<std::vector<Array>> RunLoopGroup(const Computation& comp, const LoopFusionPlan& plan, int g,
                                        const std::function<const Array&(int)>& value_of,
                                        const ParallelContext& parallel) {
  const LoopGroup& group = plan.groups[static_cast<size_t>(g)];
  const int64_t total = Product(group.dims);
  // Where each value a member reads comes from, per block: a member's register (or its output
  // array), an input array, a pred input turned into 0/1 floats, a scalar broadcast or a
  // broadcast along trailing dims (each of its values repeated `inner` times).
  enum class From { kMember, kInput, kPredInput, kSplat, kRowSplat };
  struct Source {
    From from;
    int slot;  // member position, input, pred input, splat or row splat index
  };
  struct RowSplat {
    const float* values;
    int64_t inner;
  };
  std::unordered_map<int, Source> source;
  std::vector<const float*> inputs;
  std::vector<const int64_t*> pred_inputs;
  std::vector<float> splat_values;
  std::vector<RowSplat> row_splats;
  for (size_t m = 0; m < group.members.size(); ++m) {
    source[group.members[m]] = {From::kMember, static_cast<int>(m)};
  }
  std::vector<std::vector<Source>> reads(group.members.size());
  for (size_t m = 0; m < group.members.size(); ++m) {
    for (int o : comp.instructions[static_cast<size_t>(group.members[m])].operands) {
      auto it = source.find(o);
      if (it == source.end()) {
        const Instruction& producer = comp.instructions[static_cast<size_t>(o)];
        if (plan.unmaterialised[static_cast<size_t>(o)]) {
          const Array& scalars = value_of(producer.operands[0]);
          if (scalars.size() == 1) {
            splat_values.push_back(scalars.f[0]);
            it = source.emplace(o, Source{From::kSplat, static_cast<int>(splat_values.size() - 1)})
                     .first;
          } else {
            row_splats.push_back({scalars.f.data(), total / std::max<int64_t>(1, scalars.size())});
            it = source.emplace(o, Source{From::kRowSplat, static_cast<int>(row_splats.size() - 1)})
                     .first;
          }
        } else if (producer.shape.type == PrimitiveType::kPred) {
          pred_inputs.push_back(value_of(o).i.data());
          it = source.emplace(o, Source{From::kPredInput, static_cast<int>(pred_inputs.size() - 1)})
                   .first;
        } else {
          const Array& a = value_of(o);
          // A materialised scalar broadcast is an array too; any other operand has the group's
          // shape (elementwise operands match their result).
          inputs.push_back(a.f.data());
          it = source.emplace(o, Source{From::kInput, static_cast<int>(inputs.size() - 1)}).first;
        }
      }
      reads[m].push_back(it->second);
    }
  }
  std::vector<Array> outs;
  std::vector<int> out_of(group.members.size(), -1);  // member position -> output index
  for (int o : group.outputs) {
    const size_t m = static_cast<size_t>(std::find(group.members.begin(), group.members.end(), o) -
                                         group.members.begin());
    out_of[m] = static_cast<int>(outs.size());
    outs.push_back(
        Array::Uninitialized(comp.instructions[static_cast<size_t>(o)].shape.type, group.dims));
  }
  std::vector<ElementwiseOp> ops;
  for (int member : group.members) {
    ops.push_back(OpOf(comp.instructions[static_cast<size_t>(member)]));
  }
  // Registers for the members: a member's register is free again after the last member that
  // reads it, so a 22-op chain needs a handful, not 22.
  const size_t members = group.members.size();
  std::vector<size_t> last_reader(members, 0);
  for (size_t m = 0; m < members; ++m) {
    for (const Source& s : reads[m]) {
      if (s.from == From::kMember) last_reader[static_cast<size_t>(s.slot)] = m;
    }
  }
  std::vector<size_t> reg_of(members, 0);
  size_t member_regs = 0;
  {
    std::vector<size_t> free_regs;
    for (size_t m = 0; m < members; ++m) {
      if (free_regs.empty()) free_regs.push_back(member_regs++);
      reg_of[m] = free_regs.back();
      free_regs.pop_back();
      for (const Source& s : reads[m]) {
        const size_t r = static_cast<size_t>(s.slot);
        // A member read twice by m is freed once; an output member never held a register that
        // another member may share while a later member could still read it.
        if (s.from == From::kMember && last_reader[r] == m &&
            std::find(free_regs.begin(), free_regs.end(), reg_of[r]) == free_regs.end()) {
          free_regs.push_back(reg_of[r]);
        }
      }
    }
  }
  const bool done =
      ParallelChunks(parallel, total, kElementwiseGrain, [&](int64_t begin, int64_t end) {
        // Registers: the members' shared ones, then one per pred input, splat and row splat.
        const size_t row_base = member_regs + pred_inputs.size() + splat_values.size();
        std::vector<float> regs((row_base + row_splats.size()) * static_cast<size_t>(kBlock));
        auto reg = [&](size_t r) { return regs.data() + r * static_cast<size_t>(kBlock); };
        for (size_t s = 0; s < splat_values.size(); ++s) {
          std::fill_n(reg(member_regs + pred_inputs.size() + s), kBlock, splat_values[s]);
        }
        std::vector<float*> at(members);
        for (int64_t b = begin; b < end; b += kBlock) {
          const int64_t len = std::min(kBlock, end - b);
          for (size_t p = 0; p < pred_inputs.size(); ++p) {
            float* r = reg(member_regs + p);
            for (int64_t k = 0; k < len; ++k) r[k] = pred_inputs[p][b + k] != 0 ? 1.0f : 0.0f;
          }
          for (size_t q = 0; q < row_splats.size(); ++q) {
            SplatRowsF32(row_splats[q].values, row_splats[q].inner, b, len, reg(row_base + q));
          }
          auto ptr = [&](const Source& s) -> const float* {
            switch (s.from) {
              case From::kMember:
                return at[static_cast<size_t>(s.slot)];
              case From::kInput:
                return inputs[static_cast<size_t>(s.slot)] + b;
              case From::kPredInput:
                return reg(member_regs + static_cast<size_t>(s.slot));
              case From::kSplat:
                return reg(member_regs + pred_inputs.size() + static_cast<size_t>(s.slot));
              case From::kRowSplat:
                return reg(row_base + static_cast<size_t>(s.slot));
            }
            return nullptr;
          };
          for (size_t m = 0; m < members; ++m) {
            const int out = out_of[m];
            // An f32 output is its own register; a pred output converts the register after.
            float* o = out >= 0 && outs[static_cast<size_t>(out)].floating()
                           ? outs[static_cast<size_t>(out)].f.data() + b
                           : reg(reg_of[m]);
            at[m] = o;
            const std::vector<Source>& in = reads[m];
            if (ops[m].opcode == Opcode::kSelect) {
              SelectBlockF32(ptr(in[0]), ptr(in[1]), ptr(in[2]), o, len);
            } else {
              MapBlockF32(ops[m], ptr(in[0]), in.size() > 1 ? ptr(in[1]) : nullptr, o, len);
            }
            if (out >= 0 && !outs[static_cast<size_t>(out)].floating()) {
              int64_t* dst = outs[static_cast<size_t>(out)].i.data() + b;
              for (int64_t k = 0; k < len; ++k) dst[k] = o[k] != 0.0f ? 1 : 0;
            }
          }
        }
      });
  if (!done) {
    return Status::Cancelled("HLO execution cancelled in " +
                             comp.instructions[static_cast<size_t>(group.at)].Describe());
  }
  return outs;
}

}  // namespace tpuemu::engine::hlo::internal
