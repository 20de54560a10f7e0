// Fused kernels (engine/hlo/fused_kernels.h): which loop-fusion groups run as one compiled
// kernel, that such a run has the bits of the instruction-by-instruction loop, and that the graph
// lowering's GELU still is the template (so a change to either side cannot silently fall back).
#include "engine/hlo/fused_kernels.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>

#include "engine/frontend/from_graph.h"
#include "engine/hlo/parser.h"
#include "engine/runtime/pool.h"
#include "tests/engine/hlo/hlo_test_util.h"

namespace tpuemu::engine::hlo {
namespace {

using internal::FusedKernel;
using testing::F32;
using testing::Floats;
using testing::MustRun;

// The GELU and its gradient as the graph lowering writes them (names aside), each its own group,
// on [48,100]: above the fusion threshold, and 4800 elements is no multiple of a vector.
constexpr const char* kGeluAndGrad = R"(HloModule m
ENTRY e {
  x = f32[48,100] parameter(0)
  dy = f32[48,100] parameter(1)
  a = f32[] constant(0.0447149985)
  ab = f32[48,100] broadcast(a), dimensions={}
  m0 = f32[48,100] multiply(ab, x)
  m1 = f32[48,100] multiply(m0, x)
  m2 = f32[48,100] multiply(m1, x)
  s = f32[48,100] add(x, m2)
  c = f32[] constant(0.797884583)
  cb = f32[48,100] broadcast(c), dimensions={}
  m3 = f32[48,100] multiply(cb, s)
  t = f32[48,100] tanh(m3)
  one = f32[] constant(1)
  oneb = f32[48,100] broadcast(one), dimensions={}
  u = f32[48,100] add(oneb, t)
  half = f32[] constant(0.5)
  halfb = f32[48,100] broadcast(half), dimensions={}
  hv = f32[48,100] multiply(halfb, x)
  gelu = f32[48,100] multiply(hv, u)
  g.m0 = f32[48,100] multiply(ab, x)
  g.m1 = f32[48,100] multiply(g.m0, x)
  g.m2 = f32[48,100] multiply(g.m1, x)
  g.s = f32[48,100] add(x, g.m2)
  g.m3 = f32[48,100] multiply(cb, g.s)
  g.t = f32[48,100] tanh(g.m3)
  g.u = f32[48,100] add(oneb, g.t)
  left = f32[48,100] multiply(halfb, g.u)
  tt = f32[48,100] multiply(g.t, g.t)
  sech2 = f32[48,100] subtract(oneb, tt)
  a3 = f32[] constant(0.134144992)
  a3b = f32[48,100] broadcast(a3), dimensions={}
  p0 = f32[48,100] multiply(a3b, x)
  p1 = f32[48,100] multiply(p0, x)
  poly = f32[48,100] add(oneb, p1)
  g.hv = f32[48,100] multiply(halfb, x)
  r0 = f32[48,100] multiply(g.hv, sech2)
  r1 = f32[48,100] multiply(r0, cb)
  right = f32[48,100] multiply(r1, poly)
  d = f32[48,100] add(left, right)
  grad = f32[48,100] multiply(dy, d)
  ROOT r = (f32[48,100], f32[48,100]) tuple(gelu, grad)
})";

std::vector<uint32_t> KernelBits(const Value& v) {
  std::vector<uint32_t> bits;
  for (float x : Floats(v)) bits.push_back(std::bit_cast<uint32_t>(x));
  return bits;
}

// Values across tanh's two polynomial ranges and its saturation, plus the special ones.
Value Values(float scale, float step) {
  std::vector<float> v(4800);
  for (size_t i = 0; i < v.size(); ++i) v[i] = scale * std::sin(static_cast<float>(i) * step);
  const float specials[] = {std::nanf(""),
                            -0.0f,
                            0.0f,
                            std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::denorm_min(),
                            1e30f,
                            -1e30f,
                            0.625f,
                            -9.0f};
  for (size_t i = 0; i < std::size(specials); ++i) v[100 + i] = specials[i];
  return F32({48, 100}, std::move(v));
}

std::vector<FusedKernel> Kernels(const Computation& comp) {
  const internal::LoopFusionPlan plan = internal::PlanFusedLoops(comp);
  std::vector<FusedKernel> kernels;
  for (const internal::LoopGroup& g : plan.groups) {
    if (!g.members.empty()) kernels.push_back(g.kernel.kernel);
  }
  return kernels;
}

TEST(HloFusedKernels, TheGeluAndItsGradientAreMatchedWithTheirArguments) {
  Result<Module> m = ParseModule(kGeluAndGrad);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const Computation& comp = m->entry_computation();
  const internal::LoopFusionPlan plan = internal::PlanFusedLoops(comp);
  std::vector<const internal::LoopGroup*> groups;
  for (const internal::LoopGroup& g : plan.groups) {
    if (!g.members.empty()) groups.push_back(&g);
  }
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0]->kernel.kernel, FusedKernel::kGelu);
  EXPECT_EQ(groups[0]->kernel.inputs, (std::vector<int>{comp.parameters[0]}));
  EXPECT_EQ(groups[1]->kernel.kernel, FusedKernel::kGeluGrad);
  // x first, dy second, though the group reads x first and dy last.
  EXPECT_EQ(groups[1]->kernel.inputs, (std::vector<int>{comp.parameters[0], comp.parameters[1]}));
  // loop_fusion.h's plan alone has the same groups and no kernels: they run member by member.
  const internal::LoopFusionPlan plain = internal::PlanLoopFusion(comp);
  for (const internal::LoopGroup& g : plain.groups) EXPECT_EQ(g.kernel.kernel, FusedKernel::kNone);
}

TEST(HloFusedKernels, AKernelRunHasTheBitsOfTheInstructionLoop) {
  EvalOptions unfused;
  unfused.loop_fusion = false;
  Pool pool(3);
  EvalOptions pooled;
  pooled.pool = &pool;
  pooled.max_threads = 4;
  for (float scale : {0.5f, 3.0f, 12.0f}) {
    const std::vector<Value> args = {Values(scale, 0.37f), Values(1.0f, 0.11f)};
    const Value want = MustRun(kGeluAndGrad, args, unfused);
    ASSERT_EQ(want.elements.size(), 2u);
    for (const EvalOptions& options : {EvalOptions{}, pooled}) {
      const Value got = MustRun(kGeluAndGrad, args, options);
      ASSERT_EQ(got.elements.size(), 2u);
      EXPECT_EQ(KernelBits(got.elements[0]), KernelBits(want.elements[0]))
          << "gelu, scale " << scale;
      EXPECT_EQ(KernelBits(got.elements[1]), KernelBits(want.elements[1]))
          << "grad, scale " << scale;
    }
    // Real values: gelu(x) at a point.
    const float x = Floats(args[0])[7];
    EXPECT_NEAR(Floats(want.elements[0])[7],
                0.5f * x * (1 + std::tanh(0.797884583f * (x + 0.0447149985f * x * x * x))), 1e-5f);
  }
}

TEST(HloFusedKernels, AChangedExpressionOrASecondOutputRunsMemberByMember) {
  // The last multiply's operands swapped: the same value, another expression.
  std::string swapped = kGeluAndGrad;
  swapped.replace(swapped.find("multiply(hv, u)"), 15, "multiply(u, hv)");
  Result<Module> m = ParseModule(swapped);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(Kernels(m->entry_computation()),
            (std::vector<FusedKernel>{FusedKernel::kNone, FusedKernel::kGeluGrad}));
  // tanh read outside the GELU's group as well: the group has two outputs.
  std::string two_outputs = kGeluAndGrad;
  two_outputs.replace(two_outputs.find("tuple(gelu, grad)"), 17, "tuple(gelu, t)");
  Result<Module> m2 = ParseModule(two_outputs);
  ASSERT_TRUE(m2.ok()) << m2.status().ToString();
  for (FusedKernel k : Kernels(m2->entry_computation())) EXPECT_NE(k, FusedKernel::kGelu);
}

TEST(HloFusedKernels, TheGraphLoweringsGeluAndGeluGradAreTheTemplates) {
  Graph g("gelus");
  const std::string x = g.Parameter("x", {32, 256});
  const std::string dy = g.Parameter("dy", {32, 256});
  const std::string y = g.Gelu("y", x);
  const std::string dx = g.GeluGrad("dx", x, dy);
  ASSERT_TRUE(g.AddOutput(y).ok());
  ASSERT_TRUE(g.AddOutput(dx).ok());
  Result<GraphLowering> lowered = LowerGraph(g);
  ASSERT_TRUE(lowered.ok()) << lowered.status().ToString();
  Result<Module> m = ParseModule(lowered->text);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(Kernels(m->entry_computation()),
            (std::vector<FusedKernel>{FusedKernel::kGelu, FusedKernel::kGeluGrad}));
}

}  // namespace
}  // namespace tpuemu::engine::hlo
