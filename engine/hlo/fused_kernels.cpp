#include "engine/hlo/fused_kernels.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <string>
#include <unordered_map>

#include "engine/hlo/parser.h"
#include "engine/kernels/vector_math.h"
#include "engine/runtime/parallel.h"

namespace tpuemu::engine::hlo::internal {
namespace {

// The tanh-GELU and its gradient as engine/frontend/op_lowering_ops.cpp's LowerGelu/LowerGeluGrad
// write them, in GeluArray's and GeluGradArray's order (engine/kernels/vector_math.cpp). Parameter
// k is the kernel's argument k. Both begin with t = tanh(c·(x + a·x·x·x)) and 1 + t.
constexpr const char* kTanhPart = R"(
  a = f32[] constant(0.0447149985)
  ab = f32[4096]{0} broadcast(a), dimensions={}
  m0 = f32[4096]{0} multiply(ab, x)
  m1 = f32[4096]{0} multiply(m0, x)
  m2 = f32[4096]{0} multiply(m1, x)
  s = f32[4096]{0} add(x, m2)
  c = f32[] constant(0.797884583)
  cb = f32[4096]{0} broadcast(c), dimensions={}
  m3 = f32[4096]{0} multiply(cb, s)
  t = f32[4096]{0} tanh(m3)
  one = f32[] constant(1)
  oneb = f32[4096]{0} broadcast(one), dimensions={}
  u = f32[4096]{0} add(oneb, t)
  half = f32[] constant(0.5)
  halfb = f32[4096]{0} broadcast(half), dimensions={}
)";

std::string GeluText() {
  return std::string("HloModule gelu\nENTRY e {\n  x = f32[4096]{0} parameter(0)") + kTanhPart +
         R"(  hv = f32[4096]{0} multiply(halfb, x)
  ROOT y = f32[4096]{0} multiply(hv, u)
}
)";
}

std::string GeluGradText() {
  return std::string(
             "HloModule gelu_grad\nENTRY e {\n  x = f32[4096]{0} parameter(0)\n"
             "  dy = f32[4096]{0} parameter(1)") +
         kTanhPart + R"(  left = f32[4096]{0} multiply(halfb, u)
  tt = f32[4096]{0} multiply(t, t)
  sech2 = f32[4096]{0} subtract(oneb, tt)
  a3 = f32[] constant(0.134144992)
  a3b = f32[4096]{0} broadcast(a3), dimensions={}
  p0 = f32[4096]{0} multiply(a3b, x)
  p1 = f32[4096]{0} multiply(p0, x)
  poly = f32[4096]{0} add(oneb, p1)
  hv = f32[4096]{0} multiply(halfb, x)
  r0 = f32[4096]{0} multiply(hv, sech2)
  r1 = f32[4096]{0} multiply(r0, cb)
  right = f32[4096]{0} multiply(r1, poly)
  d = f32[4096]{0} add(left, right)
  ROOT g = f32[4096]{0} multiply(dy, d)
}
)";
}

// The group's expression as text: per member its opcode (a compare with its direction) and its
// operands — "m<k>" the k-th member, "i<k>" the k-th distinct array read from outside (by first
// read), "c<bits>" a broadcast scalar constant — then its outputs. Inputs get the indices of the
// arrays read from outside, in that order. Empty when a member reads a broadcast of a
// non-constant scalar (no template does).
std::string Expression(const Computation& comp, const LoopFusionPlan& plan, const LoopGroup& g,
                       std::vector<int>* inputs) {
  std::unordered_map<int, int> member_at;
  for (size_t m = 0; m < g.members.size(); ++m) member_at[g.members[m]] = static_cast<int>(m);
  std::string text;
  char buf[32];
  for (int member : g.members) {
    const Instruction& inst = comp.instructions[static_cast<size_t>(member)];
    text += OpcodeName(inst.opcode);
    if (inst.opcode == Opcode::kCompare) {
      text += "/" + std::to_string(static_cast<int>(inst.a().direction));
    }
    text += "(";
    for (int o : inst.operands) {
      if (auto it = member_at.find(o); it != member_at.end()) {
        text += "m" + std::to_string(it->second);
      } else if (plan.unmaterialised[static_cast<size_t>(o)]) {
        const Instruction& scalar = comp.instructions[static_cast<size_t>(
            comp.instructions[static_cast<size_t>(o)].operands[0])];
        if (scalar.opcode != Opcode::kConstant || !scalar.shape.dims.empty() || !scalar.literal ||
            !scalar.literal->array) {
          return "";
        }
        std::snprintf(buf, sizeof buf, "c%08x",
                      std::bit_cast<uint32_t>(scalar.literal->array->f[0]));
        text += buf;
      } else {
        auto at = std::find(inputs->begin(), inputs->end(), o);
        if (at == inputs->end()) at = inputs->insert(inputs->end(), o);
        text += "i" + std::to_string(at - inputs->begin());
      }
      text += ",";
    }
    text += ")";
  }
  text += " ->";
  for (int o : g.outputs) text += " m" + std::to_string(member_at[o]);
  return text;
}

struct Template {
  FusedKernel kernel;
  size_t members = 0;  // the group's size: most groups are told apart by it alone
  std::string expression;
  std::vector<int> argument_of_input;  // the group's k-th input is the kernel's argument ...
};

Template Build(FusedKernel kernel, const std::string& text) {
  Result<Module> module = ParseModule(text);
  Template t{kernel, 0, "", {}};
  if (!module.ok()) return t;  // a test keeps the templates parsing
  const Computation& comp = module->entry_computation();
  const LoopFusionPlan plan = PlanLoopFusion(comp, /*fuse=*/true);
  // Merged groups leave empty ones behind: the template is the one non-empty group.
  const LoopGroup* group = nullptr;
  for (const LoopGroup& g : plan.groups) {
    if (g.members.empty()) continue;
    if (group != nullptr) return t;
    group = &g;
  }
  if (group == nullptr) return t;
  std::vector<int> inputs;
  t.members = group->members.size();
  t.expression = Expression(comp, plan, *group, &inputs);
  for (int i : inputs) {
    const auto& params = comp.parameters;
    t.argument_of_input.push_back(
        static_cast<int>(std::find(params.begin(), params.end(), i) - params.begin()));
  }
  return t;
}

const std::vector<Template>& Templates() {
  static const std::vector<Template> templates = {
      Build(FusedKernel::kGelu, GeluText()),
      Build(FusedKernel::kGeluGrad, GeluGradText()),
  };
  return templates;
}

// The kernel for group `group` of `plan` over `comp`, with the group's inputs in the kernel's
// argument order; FusedKernel::kNone when its expression is not one of the templates.
FusedKernelCall MatchFusedKernel(const Computation& comp, const LoopFusionPlan& plan,
                                 const LoopGroup& group) {
  if (group.outputs.size() != 1 || group.outputs[0] != group.at) return {};
  // The plan is made on every evaluation: no text for a group no template's size fits.
  const std::vector<Template>& templates = Templates();
  if (std::none_of(templates.begin(), templates.end(),
                   [&](const Template& t) { return t.members == group.members.size(); })) {
    return {};
  }
  std::vector<int> inputs;
  const std::string expression = Expression(comp, plan, group, &inputs);
  if (expression.empty()) return {};
  for (const Template& t : templates) {
    if (t.expression != expression) continue;
    FusedKernelCall call{t.kernel, std::vector<int>(inputs.size())};
    for (size_t k = 0; k < inputs.size(); ++k) {
      call.inputs[static_cast<size_t>(t.argument_of_input[k])] = inputs[k];
    }
    return call;
  }
  return {};
}

// Runs a matched group: out = the kernel over inputs (each the group's element count), in chunks
// on `parallel`. False when the parallel context's token stopped it.
bool RunFusedKernel(FusedKernel kernel, const std::vector<const float*>& inputs, float* out,
                    int64_t n, const ParallelContext& parallel) {
  return ParallelChunks(parallel, n, kElementwiseGrain, [&](int64_t begin, int64_t end) {
    switch (kernel) {
      case FusedKernel::kGelu:
        GeluArray(inputs[0] + begin, out + begin, end - begin);
        return;
      case FusedKernel::kGeluGrad:
        GeluGradArray(inputs[0] + begin, inputs[1] + begin, out + begin, end - begin);
        return;
      case FusedKernel::kNone:
        return;
    }
  });
}

}  // namespace

LoopFusionPlan PlanFusedLoops(const Computation& comp, bool fuse) {
  LoopFusionPlan plan = PlanLoopFusion(comp, fuse);
  for (LoopGroup& g : plan.groups) {
    if (!g.members.empty()) g.kernel = MatchFusedKernel(comp, plan, g);
  }
  return plan;
}

Result<std::vector<Array>> RunFusedGroup(const Computation& comp, const LoopFusionPlan& plan, int g,
                                         const std::function<const Array&(int)>& value_of,
                                         const ParallelContext& parallel) {
  const LoopGroup& group = plan.groups[static_cast<size_t>(g)];
  if (group.kernel.kernel == FusedKernel::kNone) {
    return RunLoopGroup(comp, plan, g, value_of, parallel);
  }
  std::vector<const float*> inputs;
  for (int i : group.kernel.inputs) inputs.push_back(value_of(i).f.data());
  std::vector<Array> outs;
  outs.push_back(Array::Uninitialized(PrimitiveType::kF32, group.dims));
  if (!RunFusedKernel(group.kernel.kernel, inputs, outs[0].f.data(), outs[0].size(), parallel)) {
    return Status::Cancelled("HLO execution cancelled in " +
                             comp.instructions[static_cast<size_t>(group.at)].Describe());
  }
  return outs;
}

}  // namespace tpuemu::engine::hlo::internal
