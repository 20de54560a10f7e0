// The cost model: MXU rows equal the timing model's DotCost, fusion boundaries decide HBM
// traffic, trip counts and branches decide counts, collectives go over ICI, unsupported
// instructions are errors or zero-priced warnings, and HBM peaks are checked against capacity.
#include "engine/hlo/cost_model.h"
#include "engine/chip/chip_model.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/engine/hlo/hlo_test_util.h"

namespace tpuemu::engine::hlo {
namespace {

using ::testing::HasSubstr;

Slice MustSlice(const std::string& type) {
  auto s = Slice::FromAcceleratorType(type);
  EXPECT_TRUE(s.ok());
  return *s;
}

ModuleCost MustPrice(const std::string& text, const std::string& type = "v4-8",
                     const CostOptions& options = {}) {
  Module m = testing::MustParse(text);
  Result<ModuleCost> c = PriceModule(m, MustSlice(type), options);
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? std::move(*c) : ModuleCost{};
}

const InstructionCost* Row(const ModuleCost& c, const std::string& name) {
  for (const InstructionCost& r : c.rows) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

std::string DotModule(const std::string& type, const std::string& precision) {
  return "HloModule m\nENTRY e {\n  a = " + type + "[256,512] parameter(0)\n  b = " + type +
         "[512,1024] parameter(1)\n  ROOT d = f32[256,1024] dot(a, b), lhs_contracting_dims={1}, "
         "rhs_contracting_dims={0}" +
         precision + "\n}\n";
}

TEST(HloCostModel, DotRowsAreTheTimingModelsDotCost) {
  const ModuleCost c =
      MustPrice(DotModule("f32", ", operand_precision={highest,highest}"), "v5litepod-4");
  const InstructionCost* d = Row(c, "d");
  ASSERT_NE(d, nullptr);
  const ChipSpec& spec = Spec(Generation::kV5e);
  const OpCost want = DotCost(spec, 1, {256, 1024, 512}, 6, 2, 1);
  EXPECT_EQ(d->compute_cycles, MxuCycles(want.compute_cycles, TimingMode::kTpu));
  EXPECT_EQ(d->passes, 6);
  EXPECT_EQ(d->unit, "mxu");
  EXPECT_DOUBLE_EQ(d->flops, 2.0 * 256 * 1024 * 512);
  EXPECT_DOUBLE_EQ(d->hbm_bytes, 4.0 * (256 * 512 + 512 * 1024 + 256 * 1024));
  EXPECT_EQ(d->cycles, std::max(d->compute_cycles, d->memory_cycles));
  EXPECT_EQ(c.cycles, d->cycles);
  EXPECT_EQ(c.tensorcores_per_device, 1);
  // The GEMM the row ran, for the comparison's MXU fold model (engine/cost/).
  EXPECT_EQ(d->gemm, (GemmShape{256, 1024, 512}));
  EXPECT_EQ(d->gemm_batch, 1);
  EXPECT_DOUBLE_EQ(d->mxu_flops, d->flops);
}

TEST(HloCostModel, AFusionWithOneDotCarriesItsGemm) {
  const ModuleCost c = MustPrice(R"(HloModule m
fused {
  a = f32[4,8,16] parameter(0)
  b = f32[4,16,32] parameter(1)
  d = f32[4,8,32] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  ROOT t = f32[4,8,32] tanh(d)
}
ENTRY e {
  a = f32[4,8,16] parameter(0)
  b = f32[4,16,32] parameter(1)
  ROOT f = f32[4,8,32] fusion(a, b), kind=kOutput, calls=fused
}
)");
  const InstructionCost* f = Row(c, "f");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->unit, "mxu");
  EXPECT_EQ(f->gemm, (GemmShape{8, 32, 16}));
  EXPECT_EQ(f->gemm_batch, 4);
  EXPECT_DOUBLE_EQ(f->mxu_flops, 2.0 * 4 * 8 * 32 * 16);
  EXPECT_GT(f->flops, f->mxu_flops);  // the tanh on the vector units
}

TEST(HloCostModel, PrecisionPasses) {
  EXPECT_EQ(Row(MustPrice(DotModule("f32", "")), "d")->passes, 1);
  EXPECT_EQ(Row(MustPrice(DotModule("f32", ", operand_precision={high,default}")), "d")->passes, 3);
  EXPECT_EQ(Row(MustPrice(DotModule("bf16", ", operand_precision={highest,highest}")), "d")->passes,
            1);
  CostOptions highest;
  highest.precision = Precision::kHighest;
  EXPECT_EQ(Row(MustPrice(DotModule("f32", ""), "v4-8", highest), "d")->passes, 6);
}

TEST(HloCostModel, MegacoreDevicesAreChips) {
  const ModuleCost c = MustPrice(DotModule("f32", ""), "v4-8");
  EXPECT_EQ(c.tensorcores_per_device, 2);
  const OpCost want = DotCost(Spec(Generation::kV4), 1, {256, 1024, 512}, 1, 2, 2);
  EXPECT_EQ(Row(c, "d")->compute_cycles, MxuCycles(want.compute_cycles, TimingMode::kTpu));
}

constexpr const char* kChain = R"(HloModule m
add { a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b) }
ENTRY e {
  x = f32[1024,1024] parameter(0)
  e = f32[1024,1024] exponential(x)
  two = f32[] constant(2)
  t = f32[1024,1024] broadcast(two), dimensions={}
  m = f32[1024,1024] multiply(e, t)
  z = f32[] constant(0)
  ROOT r = f32[1024] reduce(m, z), dimensions={1}, to_apply=add
})";

TEST(HloCostModel, BeforeOptimizationsElementwiseChainsStayOnChip) {
  const ModuleCost c = MustPrice(kChain);
  const double mb = 4.0 * 1024 * 1024;
  EXPECT_DOUBLE_EQ(Row(c, "e")->hbm_bytes, mb);  // reads x, result stays on chip
  EXPECT_DOUBLE_EQ(Row(c, "t")->hbm_bytes, 4);   // reads the scalar, result stays on chip
  EXPECT_DOUBLE_EQ(Row(c, "m")->hbm_bytes, 0);
  EXPECT_DOUBLE_EQ(Row(c, "r")->hbm_bytes, 4.0 * 1024 + 4);  // the fused m is not re-read
  EXPECT_GT(Row(c, "e")->compute_cycles, Row(c, "m")->compute_cycles);  // transcendental
}

TEST(HloCostModel, AfterOptimizationsFusionsAreTheKernels) {
  const ModuleCost c = MustPrice(R"(HloModule m
%fused (p0: f32[1024,1024]) -> f32[1024,1024] {
  %p0 = f32[1024,1024] parameter(0)
  %e = f32[1024,1024] exponential(%p0)
  %two = f32[] constant(2)
  %t = f32[1024,1024] broadcast(%two), dimensions={}
  ROOT %m = f32[1024,1024] multiply(%e, %t)
}
ENTRY e {
  x = f32[1024,1024] parameter(0)
  ROOT f = f32[1024,1024] fusion(x), kind=kLoop, calls=%fused, metadata={op_name="jit(f)/mul"}
})");
  ASSERT_EQ(c.rows.size(), 1u);
  const InstructionCost& f = c.rows[0];
  EXPECT_EQ(f.name, "f");
  EXPECT_EQ(f.op_name, "jit(f)/mul");
  EXPECT_DOUBLE_EQ(f.hbm_bytes, 2 * 4.0 * 1024 * 1024);
  const ChipSpec& spec = Spec(Generation::kV4);
  const int64_t exp = VectorCost(spec, 1024 * 1024, kVpuOpsTranscendental, 0, 2).compute_cycles;
  const int64_t vec = VectorCost(spec, 1024 * 1024, kVpuOpsElementwise, 0, 2).compute_cycles;
  EXPECT_EQ(f.compute_cycles, exp + 2 * vec);
}

std::string Loop(const std::string& backend_config, const std::string& init,
                 const std::string& bound) {
  return R"(HloModule m
cond { s = (s32[], f32[64,64]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant()" +
         bound + R"()
  ROOT lt = pred[] compare(i, n), direction=LT }
body { s = (s32[], f32[64,64]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[64,64] get-tuple-element(s), index=1
  d = f32[64,64] dot(x, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  one = s32[] constant(1)
  j = s32[] add(i, one)
  ROOT t = (s32[], f32[64,64]) tuple(j, d) }
ENTRY e {
  x = f32[64,64] parameter(0)
  i0 = s32[] )" +
         init + R"(
  s = (s32[], f32[64,64]) tuple(i0, x)
  ROOT w = (s32[], f32[64,64]) while(s), condition=cond, body=body)" +
         backend_config + "\n}\n";
}

TEST(HloCostModel, WhileTripCounts) {
  EXPECT_EQ(Row(MustPrice(Loop("", "constant(2)", "12")), "d")->count, 10);
  EXPECT_EQ(Row(MustPrice(Loop(", backend_config={\"known_trip_count\":{\"n\":\"7\"}}",
                               "parameter(1)", "12")),
                "d")
                ->count,
            7);
  const ModuleCost unknown = MustPrice(Loop("", "parameter(1)", "12"));
  EXPECT_EQ(Row(unknown, "d")->count, 1);
  ASSERT_EQ(unknown.warnings.size(), 1u);
  EXPECT_THAT(unknown.warnings[0], HasSubstr("trip count of %w (while, line 17) is unknown"));
}

TEST(HloCostModel, ConditionalsPriceTheirDearestBranch) {
  const ModuleCost c = MustPrice(R"(HloModule m
cheap { x = f32[512,512] parameter(0)
  ROOT n = f32[512,512] negate(x) }
dear { x = f32[512,512] parameter(0)
  ROOT d = f32[512,512] dot(x, x), lhs_contracting_dims={1}, rhs_contracting_dims={0} }
ENTRY e {
  p = pred[] parameter(0)
  x = f32[512,512] parameter(1)
  ROOT c = f32[512,512] conditional(p, x, x), true_computation=cheap, false_computation=dear
})");
  EXPECT_NE(Row(c, "d"), nullptr);
  EXPECT_EQ(Row(c, "n"), nullptr);
}

TEST(HloCostModel, CountsAreExactOnlyWhenTheTextFixesThem) {
  EXPECT_TRUE(MustPrice(DotModule("f32", "")).counts_exact);
  EXPECT_TRUE(MustPrice(Loop("", "constant(2)", "12")).counts_exact);
  EXPECT_FALSE(MustPrice(Loop("", "parameter(1)", "12")).counts_exact);  // trips unknown
  EXPECT_FALSE(MustPrice(R"(HloModule m
b { x = f32[8] parameter(0)
  ROOT n = f32[8] negate(x) }
ENTRY e {
  p = pred[] parameter(0)
  x = f32[8] parameter(1)
  ROOT c = f32[8] conditional(p, x, x), true_computation=b, false_computation=b
})")
                   .counts_exact);  // the dearest branch stands in for the one taken
  EXPECT_FALSE(MustPrice(R"(HloModule m
f { x = f32[8] parameter(0)
  ROOT n = f32[8] negate(x) }
ENTRY e {
  x = f32[8] parameter(0)
  a = f32[8] call(x), to_apply=f
  ROOT b = f32[8] call(a), to_apply=f
})")
                   .counts_exact);  // one computation reached twice: two rows, a run has one
}

TEST(HloCostModel, CollectivesMoveBytesOverIci) {
  const ModuleCost c = MustPrice(R"(HloModule m, replica_count=4
add { a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b) }
ENTRY e {
  x = f32[1024,1024] parameter(0)
  r = f32[1024,1024] all-reduce(x), replica_groups={{0,1,2,3}}, to_apply=add
  g = f32[4096,1024] all-gather(r), replica_groups={{0,1,2,3}}, dimensions={0}
  ROOT p = f32[4096,1024] collective-permute(g), source_target_pairs={{0,1},{1,2},{2,3},{3,0}}
})");
  // Four devices of v4: four chips of two TensorCores, over the slice's torus (chip_model.h).
  const AcceleratorType v4 = *FindAcceleratorType("v4-8");
  const ChipSpec& spec = Spec(Generation::kV4);
  const double mb4 = 4.0 * 1024 * 1024;
  EXPECT_EQ(Row(c, "r")->collective_cycles,
            TensorCoreCollectiveCycles(v4, Collective::kAllReduce, 8, mb4));
  EXPECT_EQ(Row(c, "r")->unit, "ici");
  EXPECT_EQ(Row(c, "g")->collective_cycles,
            TensorCoreCollectiveCycles(v4, Collective::kAllGather, 8, 4 * mb4));
  EXPECT_EQ(Row(c, "p")->collective_cycles,
            static_cast<int64_t>(std::ceil(
                (4 * mb4 / (spec.ici_link_bandwidth_bytes_per_s * kDefaultEfficiency.ici) +
                 kDefaultEfficiency.ici_hop_seconds) *
                spec.clock_hz)));
  EXPECT_EQ(Row(c, "p")->bound, "collective");
}

TEST(HloCostModel, UnsupportedInstructionsFailOrWarn) {
  const std::string text = R"(HloModule m
ENTRY e {
  x = f32[128,128] parameter(0)
  ROOT c = f32[128,128] custom-call(x), custom_call_target="__cudnn$convForward"
})";
  Module m = testing::MustParse(text);
  Result<ModuleCost> strict = PriceModule(m, MustSlice("v4-8"));
  ASSERT_FALSE(strict.ok());
  EXPECT_EQ(strict.status().code(), StatusCode::kUnimplemented);
  EXPECT_THAT(strict.status().message(),
              HasSubstr("%c (custom-call target \"__cudnn$convForward\", line 4)"));
  CostOptions lenient;
  lenient.allow_unsupported = true;
  const ModuleCost c = MustPrice(text, "v4-8", lenient);
  EXPECT_EQ(c.cycles, 0);
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_THAT(c.warnings[0], HasSubstr("priced at zero: %c (custom-call target"));
}

TEST(HloCostModel, DevicesMustFitTheSlice) {
  const std::string text =
      "HloModule m, replica_count=8\nENTRY e {\n ROOT x = f32[4] parameter(0)\n}";
  Module m = testing::MustParse(text);
  Result<ModuleCost> v4 = PriceModule(m, MustSlice("v4-8"));
  ASSERT_FALSE(v4.ok());
  EXPECT_THAT(v4.status().message(),
              HasSubstr("the module runs on 8 devices (replica_count 8 x num_partitions 1); v4-8 "
                        "has 4 (2 TensorCore(s) each)"));
  EXPECT_TRUE(PriceModule(m, MustSlice("v3-8")).ok());
}

TEST(HloCostModel, TensorCoresGivenSplitRowsOrTheContraction) {
  // A graph job's one-device module on the cores it asks for (engine/frontend/compiler.h).
  CostOptions four;
  four.tensorcores = 4;
  const ModuleCost rows = MustPrice(DotModule("bf16", ""), "v4-8", four);
  const InstructionCost* d = Row(rows, "d");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(rows.tensorcores_per_device, 4);
  EXPECT_EQ(d->split, SplitKind::kRows);
  EXPECT_EQ(d->compute_cycles,
            MxuCycles(DotCost(Spec(Generation::kV4), 1, {256, 1024, 512}, 1, 2, 4).compute_cycles,
                      TimingMode::kTpu));
  EXPECT_EQ(d->collective_cycles, 0);

  // A weight gradient: K (the batch) long, M·N small: partial products, then an all-reduce.
  const ModuleCost grad = MustPrice(R"(HloModule m
ENTRY e {
  x = bf16[65536,128] parameter(0)
  dy = bf16[65536,128] parameter(1)
  ROOT dw = f32[128,128] dot(x, dy), lhs_contracting_dims={0}, rhs_contracting_dims={0}
})",
                                    "v4-8", four);
  const InstructionCost* dw = Row(grad, "dw");
  ASSERT_NE(dw, nullptr);
  EXPECT_EQ(dw->split, SplitKind::kContraction);
  EXPECT_EQ(dw->collective_cycles,
            TensorCoreCollectiveCycles(*FindAcceleratorType("v4-8"), Collective::kAllReduce, 4,
                                       128.0 * 128 * 4));
  EXPECT_LT(dw->compute_cycles + dw->collective_cycles,
            MxuCycles(DotCost(Spec(Generation::kV4), 1, {128, 128, 65536}, 1, 2, 4).compute_cycles,
                      TimingMode::kTpu));

  four.tensorcores = 9;
  EXPECT_THAT(PriceModule(testing::MustParse(DotModule("bf16", "")), MustSlice("v4-8"), four)
                  .status()
                  .message(),
              HasSubstr("tensorcores must be in [1, 8] for v4-8"));
}

TEST(HloCostModel, HbmPeakAgainstCapacity) {
  // 8 GiB of parameters and a 4 GiB result on a 16 GiB v5e chip fit; 20 GiB of parameters do not.
  const ModuleCost fits = MustPrice(R"(HloModule m
ENTRY e {
  a = f32[1024,1024,1024] parameter(0)
  b = f32[1024,1024,1024] parameter(1)
  ROOT c = f32[1024,1024,1024] add(a, b)
})",
                                    "v5litepod-1");
  EXPECT_EQ(fits.peak_hbm_bytes_per_tensorcore, int64_t{12} << 30);
  EXPECT_TRUE(fits.fits);
  const ModuleCost over = MustPrice(R"(HloModule m
ENTRY e {
  a = f32[5,1024,1024,1024] parameter(0)
  ROOT n = f32[5,1024,1024,1024] negate(a)
})",
                                    "v5litepod-1");
  EXPECT_EQ(over.peak_hbm_bytes_per_tensorcore, int64_t{40} << 30);
  EXPECT_FALSE(over.fits);
  // Where: at the negate, with both results live, largest first.
  EXPECT_EQ(over.peak_instruction, 1);
  EXPECT_THAT(over.peak_live, ::testing::ElementsAre(0, 1));
  EXPECT_DOUBLE_EQ(over.hbm_capacity_bytes_per_tensorcore, Spec(Generation::kV5e).hbm_bytes);
}

}  // namespace
}  // namespace tpuemu::engine::hlo
