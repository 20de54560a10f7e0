// Loop fusion (engine/hlo/loop_fusion.h): what the planner groups, and that a fused run gives the
// bits of one kernel per instruction (EvalOptions::loop_fusion off), outputs read mid-chain by
// other instructions included.
#include "engine/hlo/loop_fusion.h"

#include <gtest/gtest.h>

#include <atomic>
#include <bit>
#include <cmath>

#include "engine/hlo/parser.h"
#include "engine/runtime/pool.h"
#include "tests/engine/hlo/hlo_test_util.h"

namespace tpuemu::engine::hlo {
namespace {

using testing::F32;
using testing::Floats;
using testing::Integers;
using testing::MustRun;

// A GELU and its gradient as jax writes them, a ReLU mask, a dot reading a member mid-chain and
// a scalar broadcast that a dot reads too (so it must exist as an array): [64,128] = 8192
// elements, above the fusion threshold.
constexpr const char* kChains = R"(HloModule m
ENTRY e {
  x = f32[64,128] parameter(0)
  dy = f32[64,128] parameter(1)
  w = f32[128,128] parameter(2)
  c0 = f32[] constant(0.0447149985)
  b0 = f32[64,128] broadcast(c0), dimensions={}
  m0 = f32[64,128] multiply(b0, x)
  m1 = f32[64,128] multiply(m0, x)
  m2 = f32[64,128] multiply(m1, x)
  a0 = f32[64,128] add(x, m2)
  c1 = f32[] constant(0.797884583)
  b1 = f32[64,128] broadcast(c1), dimensions={}
  m3 = f32[64,128] multiply(b1, a0)
  t = f32[64,128] tanh(m3)
  one = f32[] constant(1)
  b2 = f32[64,128] broadcast(one), dimensions={}
  a1 = f32[64,128] add(b2, t)
  half = f32[] constant(0.5)
  b3 = f32[64,128] broadcast(half), dimensions={}
  m4 = f32[64,128] multiply(b3, x)
  gelu = f32[64,128] multiply(m4, a1)
  d = f32[64,128] dot(a1, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  e = f32[64,128] exponential(d)
  s = f32[64,128] subtract(e, gelu)
  zero = f32[] constant(0)
  bz = f32[64,128] broadcast(zero), dimensions={}
  p = pred[64,128] compare(x, bz), direction=GT
  relu_grad = f32[64,128] select(p, dy, bz)
  q = f32[64,128] divide(relu_grad, e)
  mx = f32[64,128] maximum(q, s)
  wz = f32[64,128] dot(bz, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT r = (f32[64,128], f32[64,128], pred[64,128], f32[64,128], f32[64,128]) tuple(gelu, mx, p, a1, wz)
})";

std::vector<uint32_t> FusedBits(const Value& v) {
  std::vector<uint32_t> bits;
  for (float x : Floats(v)) bits.push_back(std::bit_cast<uint32_t>(x));
  return bits;
}

// The position of the instruction called `name` in comp (a failure, and 0, when there is none).
size_t IndexOf(const Computation& comp, const std::string& name) {
  for (size_t i = 0; i < comp.instructions.size(); ++i) {
    if (comp.instructions[i].name == name) return i;
  }
  ADD_FAILURE() << name;
  return 0;
}

Value Wave(std::vector<int64_t> dims, float step, float scale) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = scale * std::sin(static_cast<float>(i) * step);
  v[17] = std::nanf("");  // a NaN must travel through the fused ops as through the kernels
  v[18] = -0.0f;
  return F32(std::move(dims), std::move(v));
}

TEST(HloLoopFusion, GroupsChainsAndClosesAGroupThatSomethingOutsideReads) {
  Result<Module> m = ParseModule(kChains);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const Computation& comp = m->entry_computation();
  const internal::LoopFusionPlan plan = internal::PlanLoopFusion(comp);
  auto index = [&](const std::string& name) { return IndexOf(comp, name); };
  auto group = [&](const std::string& name) { return plan.group_of[index(name)]; };
  // The GELU is one group: the chain to a1, and m4 (which started a group of its own from x)
  // merged into it where gelu reads both. The dot after it reads a1, so a1 and gelu (read by s
  // and the root) are its outputs, and it closes: e, read from the dot, starts a new group.
  EXPECT_GE(group("m0"), 0);
  for (const char* name : {"m1", "m2", "a0", "m3", "t", "a1", "m4", "gelu"}) {
    EXPECT_EQ(group(name), group("m0")) << name;
  }
  const internal::LoopGroup& chain = plan.groups[static_cast<size_t>(group("m0"))];
  EXPECT_EQ(chain.outputs,
            (std::vector<int>{static_cast<int>(index("a1")), static_cast<int>(index("gelu"))}));
  EXPECT_EQ(chain.at, static_cast<int>(index("gelu")));
  EXPECT_GE(group("e"), 0);
  EXPECT_NE(group("e"), group("m0"));
  EXPECT_EQ(group("s"), group("e"));
  // Broadcast constants only fused ops read are never built; bz feeds a dot, so it is.
  EXPECT_TRUE(plan.unmaterialised[index("b0")]);
  EXPECT_FALSE(plan.unmaterialised[index("bz")]);
  EXPECT_EQ(group("d"), -1);
  EXPECT_EQ(group("wz"), -1);
  // x is read by fused members up to the gelu's group and by the compare: its last use is the
  // later of those groups' positions, not the position of its last reader in the text.
  EXPECT_GE(plan.last_use[index("x")], static_cast<int>(index("p")));
  // Without fusion: no groups, and every splat exists.
  const internal::LoopFusionPlan off = internal::PlanLoopFusion(comp, /*fuse=*/false);
  EXPECT_TRUE(off.groups.empty());
  EXPECT_FALSE(off.unmaterialised[index("b0")]);
}

TEST(HloLoopFusion, AFusedRunHasTheBitsOfOneKernelPerInstruction) {
  const std::vector<Value> args = {Wave({64, 128}, 0.37f, 3.0f), Wave({64, 128}, 0.11f, 1.0f),
                                   Wave({128, 128}, 0.05f, 0.1f)};
  EvalOptions unfused;
  unfused.loop_fusion = false;
  Pool pool(3);
  EvalOptions pooled;
  pooled.pool = &pool;
  pooled.max_threads = 4;
  const Value want = MustRun(kChains, args, unfused);
  ASSERT_EQ(want.elements.size(), 5u);
  for (const EvalOptions& options : {EvalOptions{}, pooled}) {
    const Value got = MustRun(kChains, args, options);
    ASSERT_EQ(got.elements.size(), 5u);
    for (size_t e : {0u, 1u, 3u, 4u})
      EXPECT_EQ(FusedBits(got.elements[e]), FusedBits(want.elements[e])) << e;
    EXPECT_EQ(Integers(got.elements[2]), Integers(want.elements[2]));
  }
  // The values are real: gelu(x) = 0.5·x·(1 + tanh(0.7978845·(x + 0.044715·x³))) at one point.
  const float x = Floats(args[0])[5];
  const float gelu = Floats(want.elements[0])[5];
  EXPECT_NEAR(gelu, 0.5f * x * (1 + std::tanh(0.797884583f * (x + 0.0447149985f * x * x * x))),
              1e-5f);
}

TEST(HloLoopFusion, ARowBroadcastIsReadInPlaceNotBuilt) {
  // A softmax over the last dim: the row max and row sum are broadcast back along it. Fused
  // members read them per row, so neither [16,8,64] broadcast is built, and the bits are those
  // of one kernel per instruction (a NaN row included).
  const std::string text = R"(HloModule m
max { a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b) }
add { a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b) }
ENTRY e {
  x = f32[16,8,64] parameter(0)
  lo = f32[] constant(-inf)
  mx = f32[16,8] reduce(x, lo), dimensions={2}, to_apply=max
  mxb = f32[16,8,64] broadcast(mx), dimensions={0,1}
  sh = f32[16,8,64] subtract(x, mxb)
  ex = f32[16,8,64] exponential(sh)
  z = f32[] constant(0)
  sum = f32[16,8] reduce(ex, z), dimensions={2}, to_apply=add
  sumb = f32[16,8,64] broadcast(sum), dimensions={0,1}
  p = f32[16,8,64] divide(ex, sumb)
  col = f32[8,64] parameter(1)
  colb = f32[16,8,64] broadcast(col), dimensions={1,2}
  ROOT q = f32[16,8,64] multiply(p, colb)
})";
  Result<Module> m = ParseModule(text);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const Computation& comp = m->entry_computation();
  const internal::LoopFusionPlan plan = internal::PlanLoopFusion(comp);
  auto index = [&](const std::string& name) { return IndexOf(comp, name); };
  EXPECT_TRUE(plan.unmaterialised[index("mxb")]);
  EXPECT_TRUE(plan.unmaterialised[index("sumb")]);
  // A broadcast along leading dims is not a row splat: it is built.
  EXPECT_FALSE(plan.unmaterialised[index("colb")]);
  EXPECT_GE(plan.group_of[index("sh")], 0);
  EXPECT_EQ(plan.group_of[index("ex")], plan.group_of[index("sh")]);
  const Value x = Wave({16, 8, 64}, 0.37f, 4.0f);  // a NaN at element 17, in row 0
  const Value col = Wave({8, 64}, 0.05f, 1.0f);
  EvalOptions unfused;
  unfused.loop_fusion = false;
  const Value want = MustRun(text, {x, col}, unfused);
  EXPECT_EQ(FusedBits(MustRun(text, {x, col})), FusedBits(want));
  const std::vector<float> q = Floats(want);
  EXPECT_TRUE(std::isnan(q[0]));
  // Row 1 sums to one: the values are real.
  float total = 0;
  for (int k = 0; k < 64; ++k) total += q[64 + static_cast<size_t>(k)] / Floats(col)[64 + k];
  EXPECT_NEAR(total, 1.0f, 1e-4f);
}

TEST(HloLoopFusion, ACancelStopsAFusedLoop) {
  const std::string text = R"(HloModule m
ENTRY e {
  x = f32[64,128] parameter(0)
  a = f32[64,128] add(x, x)
  ROOT m = f32[64,128] multiply(a, x)
})";
  Result<Module> m = ParseModule(text);
  ASSERT_TRUE(m.ok());
  const Computation& comp = m->entry_computation();
  const internal::LoopFusionPlan plan = internal::PlanLoopFusion(comp);
  ASSERT_EQ(plan.groups.size(), 1u);
  const Value x = Wave({64, 128}, 0.1f, 1.0f);
  auto value_of = [&](int) -> const Array& { return *x.array; };
  std::atomic<bool> stop{false};
  ParallelContext ctx;
  ctx.cancel.flag = &stop;
  Result<std::vector<Array>> ran = internal::RunLoopGroup(comp, plan, 0, value_of, ctx);
  ASSERT_TRUE(ran.ok());
  ASSERT_EQ(ran->size(), 1u);  // the root, m; a stays in registers
  EXPECT_EQ((*ran)[0].f[3], (Floats(x)[3] + Floats(x)[3]) * Floats(x)[3]);
  stop = true;
  Result<std::vector<Array>> stopped = internal::RunLoopGroup(comp, plan, 0, value_of, ctx);
  ASSERT_FALSE(stopped.ok());
  EXPECT_EQ(stopped.status().code(), StatusCode::kCancelled);
  EXPECT_NE(stopped.status().message().find("%m"), std::string::npos) << stopped.status().message();
}

}  // namespace
}  // namespace tpuemu::engine::hlo
