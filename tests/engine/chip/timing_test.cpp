#include "engine/chip/timing.h"
#include "engine/chip/chip_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

#include "engine/hardware/hardware.h"
#include "tests/engine/chip/pe_array_sim.h"

namespace tpuemu::engine {
namespace {

constexpr Dataflow kWs = Dataflow::kWeightStationary;
constexpr Dataflow kOs = Dataflow::kOutputStationary;
constexpr Dataflow kIs = Dataflow::kInputStationary;

// ---- SCALE-Sim closed forms, hand-computed ----

TEST(ScaleSimGemm, Ws128Array256Cube) {
  // Sr = K = 256, Sc = N = 256, T = M = 256 -> folds = 2·2 = 4; per fold 2·128 + 128 + 256 − 2
  // = 638; Total = 4·638 − 1 = 2551. Every fold is full: mapping efficiency 1. Compute util uses
  // SCALE-Sim's 2R + 2C + T − 3 = 765. Overall = 256³ / (2551 · 128²) = 1024 / 2551.
  const GemmTiming t = ScaleSimGemm({256, 256, 256}, {128, 128}, kWs);
  EXPECT_EQ(t.cycles, 2551);
  EXPECT_EQ(t.folds, 4);
  EXPECT_DOUBLE_EQ(t.mapping_efficiency, 1.0);
  EXPECT_DOUBLE_EQ(t.compute_utilization, 256.0 / 765.0);
  EXPECT_DOUBLE_EQ(t.overall_utilization, 1024.0 / 2551.0);
}

TEST(ScaleSimGemm, Ws4x4SmallGemm) {
  // M = 5, N = 6, K = 7 on 4x4: Sr = 7, Sc = 6, T = 5; folds ⌈7/4⌉·⌈6/4⌉ = 4; per fold
  // 8 + 4 + 5 − 2 = 15; Total = 59. Used PEs over folds: (4·4 + 3·4 + 4·2 + 3·2)/4 = 42/4 of 16
  // -> 42/64. Compute util = 42/64 · 5 / (8 + 8 + 5 − 3 = 18). Overall = 210 / (59·16).
  const GemmTiming t = ScaleSimGemm({5, 6, 7}, {4, 4}, kWs);
  EXPECT_EQ(t.cycles, 59);
  EXPECT_EQ(t.folds, 4);
  EXPECT_DOUBLE_EQ(t.mapping_efficiency, 42.0 / 64.0);
  EXPECT_DOUBLE_EQ(t.compute_utilization, 42.0 / 64.0 * 5.0 / 18.0);
  EXPECT_DOUBLE_EQ(t.overall_utilization, 210.0 / (59.0 * 16.0));
}

TEST(ScaleSimGemm, Os4x4SmallGemm) {
  // os: Sr = M = 5, Sc = N = 6, T = K = 7; folds 2·2 = 4; per fold 4 + 4 + 7 − 2 = 13; Total 51.
  // Mapping 30/64; compute util uses R + C + T − 2 = 13: 30/64 · 7/13.
  const GemmTiming t = ScaleSimGemm({5, 6, 7}, {4, 4}, kOs);
  EXPECT_EQ(t.cycles, 51);
  EXPECT_DOUBLE_EQ(t.mapping_efficiency, 30.0 / 64.0);
  EXPECT_DOUBLE_EQ(t.compute_utilization, 30.0 / 64.0 * 7.0 / 13.0);
}

TEST(ScaleSimGemm, Is4x4SmallGemm) {
  // is: Sr = K = 7, Sc = M = 5, T = N = 6; folds 2·2 = 4; per fold 8 + 4 + 6 − 2 = 16; Total 63.
  const GemmTiming t = ScaleSimGemm({5, 6, 7}, {4, 4}, kIs);
  EXPECT_EQ(t.cycles, 63);
  EXPECT_DOUBLE_EQ(t.mapping_efficiency, 35.0 / 64.0);
}

TEST(ScaleSimGemm, EmptyGemmCostsNothing) {
  EXPECT_EQ(ScaleSimGemm({0, 4, 4}, {4, 4}, kWs).cycles, 0);
  EXPECT_EQ(TpuMxuGemm({4, 4, 0}, {4, 4}).cycles, 0);
}

// ---- TPU closed form ----

TEST(TpuMxuGemm, DoubleBufferingHidesAllButTheFirstWeightLoad) {
  // R = C = 128, F = 4, T = 256: 128 + 3·max(256, 128) + 256 + 128 + 128 − 2 = 1406, against
  // SCALE-Sim's 2551 for the same GEMM: ≈ R + C per fold saved.
  const GemmTiming t = TpuMxuGemm({256, 256, 256}, {128, 128});
  EXPECT_EQ(t.cycles, 1406);
  EXPECT_EQ(t.folds, 4);
  EXPECT_DOUBLE_EQ(t.overall_utilization, 256.0 * 256 * 256 / (1406.0 * 128 * 128));
}

TEST(TpuMxuGemm, ShortStreamsAreBoundByTheWeightLoad) {
  // T = 8 < R = 128: folds follow each other every R cycles. 128 + 9·128 + 8 + 254 = 1542.
  EXPECT_EQ(TpuMxuGemm({8, 128, 1280}, {128, 128}).cycles, 1542);
}

TEST(TpuMxuGemm, TwoMacsPerCellHalveTheStream) {
  // v6e-like 256x256 cells doing 2 MACs: T = ⌈512/2⌉ = 256, F = 4:
  // 256 + 3·256 + 256 + 256 + 256 − 2 = 1790.
  const GemmTiming t = TpuMxuGemm({512, 512, 512}, {256, 256, 2});
  EXPECT_EQ(t.cycles, 1790);
  EXPECT_EQ(TpuMxuGemm({511, 512, 512}, {256, 256, 2}).cycles, 1790);
  EXPECT_LT(t.cycles, TpuMxuGemm({512, 512, 512}, {256, 256, 1}).cycles);
}

// ---- The closed forms against the cycle-stepped PE array ----

sim::IntMatrix RandomMatrix(int64_t rows, int64_t cols, std::mt19937& rng) {
  std::uniform_int_distribution<int64_t> value(-9, 9);
  sim::IntMatrix m(rows, cols);
  for (int64_t& v : m.data) v = value(rng);
  return m;
}

struct ArrayCase {
  int rows, cols;
};

class SimulatorTest : public ::testing::TestWithParam<ArrayCase> {};

TEST_P(SimulatorTest, ScaleSimClosedFormEqualsSimulatorCycleForCycle) {
  const ArrayCase array = GetParam();
  std::mt19937 rng(20240601u + static_cast<unsigned>(array.rows * 100 + array.cols));
  std::uniform_int_distribution<int64_t> dim(1, 40);
  for (int trial = 0; trial < 40; ++trial) {
    const int64_t m = dim(rng), n = dim(rng), k = dim(rng);
    const sim::IntMatrix a = RandomMatrix(m, k, rng);
    const sim::IntMatrix b = RandomMatrix(k, n, rng);
    const sim::IntMatrix want = sim::ReferenceMatmul(a, b);
    for (Dataflow df : {kWs, kOs, kIs}) {
      SCOPED_TRACE(std::string(DataflowName(df)) + " M=" + std::to_string(m) +
                   " N=" + std::to_string(n) + " K=" + std::to_string(k));
      const sim::SimResult got = sim::SimulateScaleSim(a, b, array.rows, array.cols, df);
      const GemmTiming closed = ScaleSimGemm({m, n, k}, {array.rows, array.cols}, df);
      EXPECT_EQ(got.hazards, 0);
      EXPECT_EQ(got.out, want);
      EXPECT_EQ(got.folds, closed.folds);
      // SCALE-Sim's Total Cycles is the index of the last cycle.
      EXPECT_EQ(got.last_cycle, closed.cycles);
    }
  }
}

TEST_P(SimulatorTest, TpuClosedFormEqualsDoubleBufferedSimulatorCycleForCycle) {
  const ArrayCase array = GetParam();
  std::mt19937 rng(77u + static_cast<unsigned>(array.rows * 100 + array.cols));
  std::uniform_int_distribution<int64_t> dim(1, 40);
  for (int trial = 0; trial < 40; ++trial) {
    const int64_t m = dim(rng), n = dim(rng), k = dim(rng);
    const sim::IntMatrix a = RandomMatrix(m, k, rng);
    const sim::IntMatrix b = RandomMatrix(k, n, rng);
    const sim::IntMatrix want = sim::ReferenceMatmul(a, b);
    for (int macs : {1, 2}) {
      SCOPED_TRACE("macs=" + std::to_string(macs) + " M=" + std::to_string(m) +
                   " N=" + std::to_string(n) + " K=" + std::to_string(k));
      const sim::SimResult got = sim::SimulateTpuMxu(a, b, array.rows, array.cols, macs);
      const GemmTiming closed = TpuMxuGemm({m, n, k}, {array.rows, array.cols, macs});
      EXPECT_EQ(got.hazards, 0);
      EXPECT_EQ(got.out, want);
      EXPECT_EQ(got.folds, closed.folds);
      // The TPU model counts cycles (first weight-load cycle to last output, inclusive).
      EXPECT_EQ(got.last_cycle + 1, closed.cycles);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Arrays, SimulatorTest,
                         ::testing::Values(ArrayCase{4, 4}, ArrayCase{8, 8}, ArrayCase{4, 8},
                                           ArrayCase{8, 4}),
                         [](const auto& info) {
                           return std::to_string(info.param.rows) + "x" +
                                  std::to_string(info.param.cols);
                         });

TEST(Simulator, DoubleBufferingBeatsSerialFoldsOnTheSameArray) {
  std::mt19937 rng(5);
  const sim::IntMatrix a = RandomMatrix(20, 24, rng);
  const sim::IntMatrix b = RandomMatrix(24, 20, rng);
  const sim::SimResult serial = sim::SimulateScaleSim(a, b, 8, 8, kWs);
  const sim::SimResult tpu = sim::SimulateTpuMxu(a, b, 8, 8);
  EXPECT_EQ(serial.out, tpu.out);
  // 9 folds: SCALE-Sim 9·(16 + 8 + 20 − 2) − 1 = 377; TPU 8 + 8·20 + 20 + 8 + 8 − 2 = 202.
  EXPECT_EQ(serial.last_cycle, 377);
  EXPECT_EQ(tpu.last_cycle + 1, 202);
}

// ---- Convolution mapping ----

TEST(ConvAsGemm, ValidAndSamePaddingFollowTensorFlow) {
  ConvShape conv{.batch = 1,
                 .h = 224,
                 .w = 224,
                 .c = 3,
                 .fh = 7,
                 .fw = 7,
                 .filters = 64,
                 .stride_h = 2,
                 .stride_w = 2};
  // VALID: ⌈(224 − 7 + 2)/2⌉ = 110.
  const ConvShape valid = WithPadding(conv, Padding::kValid);
  EXPECT_EQ(ConvOutputHeight(valid), 110);
  EXPECT_EQ(ConvAsGemm(valid), (GemmShape{110 * 110, 64, 7 * 7 * 3}));
  // SAME: out = ⌈224/2⌉ = 112, pad = 111·2 + 7 − 224 = 5.
  const ConvShape same = WithPadding(conv, Padding::kSame);
  EXPECT_EQ(same.pad_h, 5);
  EXPECT_EQ(ConvOutputWidth(same), 112);
  conv.batch = 8;
  EXPECT_EQ(ConvAsGemm(WithPadding(conv, Padding::kSame)).m, 8 * 112 * 112);
}

TEST(ConvAsGemm, ScaleSimFormulaAndFilterLargerThanInput) {
  // SCALE-Sim: ofmap = ⌈(H − Fh + s)/s⌉ = ⌈(56 − 3 + 1)/1⌉ = 54.
  EXPECT_EQ(ConvOutputHeight({.h = 56, .fh = 3}), 54);
  EXPECT_EQ(ConvAsGemm({.h = 2, .w = 2, .c = 1, .fh = 3, .fw = 3, .filters = 4}).m, 0);
}

// ---- Whole-op costs ----

const ChipSpec& V4() { return Spec(Generation::kV4); }

TEST(DotCost, BigCubeIsComputeBoundNearPeakOnV4) {
  const OpCost c = DotCost(V4(), 1, {4096, 4096, 4096}, 1, 2, 1);
  EXPECT_EQ(c.bound, "compute");
  EXPECT_GT(c.mxu_utilization, 0.9);
  EXPECT_LE(c.mxu_utilization, 1.0);
  EXPECT_DOUBLE_EQ(c.flops, 2.0 * 4096.0 * 4096.0 * 4096.0);
  EXPECT_DOUBLE_EQ(c.seconds, static_cast<double>(c.cycles) / V4().clock_hz);
  // 1024 folds over 4 MXUs: the busiest does 256 back to back.
  EXPECT_EQ(c.compute_cycles, TpuMxuCycles(256, 4096, {128, 128}));
  EXPECT_EQ(c.folds, 1024);
}

TEST(DotCost, TinyKHugeMIsMemoryBound) {
  const OpCost c = DotCost(V4(), 1, {1 << 20, 128, 8}, 1, 2, 1);
  EXPECT_EQ(c.bound, "memory");
  EXPECT_GT(c.memory_cycles, c.compute_cycles);
  EXPECT_EQ(c.cycles, c.memory_cycles);
  EXPECT_LT(c.mxu_utilization, 0.1);
  // A + B + C at 2 bytes each.
  EXPECT_DOUBLE_EQ(c.hbm_bytes, 2.0 * ((1 << 20) * 8.0 + 8.0 * 128 + (1 << 20) * 128.0));
}

TEST(DotCost, MorePassesCostMoreComputeButNotMoreFlops) {
  const OpCost one = DotCost(V4(), 1, {2048, 2048, 2048}, 1, 2, 1);
  const OpCost six = DotCost(V4(), 1, {2048, 2048, 2048}, 6, 4, 1);
  EXPECT_DOUBLE_EQ(one.flops, six.flops);
  EXPECT_GT(six.compute_cycles, 5 * one.compute_cycles);
  EXPECT_LT(six.mxu_utilization, 1.0 / 6.0 + 1e-9);
}

TEST(DotCost, ScalesWithTensorCores) {
  const OpCost one = DotCost(V4(), 1, {8192, 4096, 4096}, 1, 2, 1);
  const OpCost eight = DotCost(V4(), 1, {8192, 4096, 4096}, 1, 2, 8);
  EXPECT_EQ(eight.tensorcores_used, 8);
  EXPECT_LT(eight.cycles * 7, one.cycles);  // nearly linear speed-up for a big compute-bound dot
  EXPECT_GT(eight.cycles * 8, one.cycles);  // but never super-linear
  EXPECT_EQ(eight.collective_cycles, 0);    // a data-parallel split needs no reduction
  // Each TensorCore reads the whole RHS.
  EXPECT_GT(eight.hbm_bytes, one.hbm_bytes);
}

TEST(DotCost, BatchSplitsOverTensorCores) {
  const OpCost c = DotCost(V4(), 8, {1024, 1024, 1024}, 1, 2, 8);
  const OpCost single = DotCost(V4(), 1, {1024, 1024, 1024}, 1, 2, 1);
  EXPECT_EQ(c.compute_cycles, single.compute_cycles);
  EXPECT_DOUBLE_EQ(c.flops, 8 * single.flops);
  EXPECT_EQ(c.folds, 8 * single.folds);
  // Fewer batch items than cores: 3 items on 8 cores use 3·⌊8/3⌋ = 6.
  EXPECT_EQ(DotCost(V4(), 3, {1024, 1024, 1024}, 1, 2, 8).tensorcores_used, 6);
}

TEST(DotCost, ScaleSimModeUsesTheChosenDataflow) {
  const GemmShape shape{512, 512, 512};
  const OpCost ws = DotCost(V4(), 1, shape, 1, 2, 1, TimingMode::kScaleSim, kWs);
  const OpCost os = DotCost(V4(), 1, shape, 1, 2, 1, TimingMode::kScaleSim, kOs);
  const OpCost tpu = DotCost(V4(), 1, shape, 1, 2, 1);
  // 16 folds over 4 MXUs: 4 each.
  EXPECT_EQ(ws.compute_cycles, ScaleSimCycles(4, 512, {128, 128}, kWs));
  EXPECT_EQ(os.compute_cycles, ScaleSimCycles(4, 512, {128, 128}, kOs));
  EXPECT_LT(tpu.compute_cycles, ws.compute_cycles);
}

TEST(DotCost, EmptyDotIsFree) {
  const OpCost c = DotCost(V4(), 1, {0, 128, 128}, 1, 2, 1);
  EXPECT_EQ(c.cycles, 0);
  EXPECT_EQ(c.flops, 0);
  EXPECT_EQ(c.mxu_utilization, 0);
}

TEST(VectorCost, RooflineOfVpuAndHbm) {
  // 1M elements on one TensorCore: ⌈2^20 / 1024⌉ = 1024 cycles per op.
  const OpCost relu = VectorCost(V4(), 1 << 20, kVpuOpsElementwise, 0, 1);
  EXPECT_EQ(relu.compute_cycles, 1024);
  EXPECT_EQ(relu.bound, "compute");
  const OpCost exp = VectorCost(V4(), 1 << 20, kVpuOpsTranscendental, 0, 1);
  EXPECT_EQ(exp.compute_cycles, 8 * 1024);
  // With real traffic (read + write f32) a ReLU is memory bound: 8 MiB at 600 GB/s per core.
  const OpCost relu_hbm = VectorCost(V4(), 1 << 20, kVpuOpsElementwise, 8.0 * (1 << 20), 1);
  EXPECT_EQ(relu_hbm.bound, "memory");
  EXPECT_EQ(relu_hbm.memory_cycles,
            static_cast<int64_t>(std::ceil(8.0 * (1 << 20) / 600e9 * V4().clock_hz)));
  EXPECT_EQ(relu_hbm.mxu_utilization, 0);
  // Split over 8 cores: an eighth of the work each.
  EXPECT_EQ(VectorCost(V4(), 1 << 20, 1, 0, 8).compute_cycles, 128);
}

// The chip model's collective (chip_model.h), which replaced timing.h's one-link ring.
TEST(TensorCoreCollectiveCycles, ZeroForOneParticipantAndGrowsWithBytes) {
  const AcceleratorType v4 = *FindAcceleratorType("v4-32");
  const auto all_reduce = [&](double bytes, int participants) {
    return TensorCoreCollectiveCycles(v4, Collective::kAllReduce, participants, bytes);
  };
  EXPECT_EQ(all_reduce(1e9, 1), 0);
  EXPECT_EQ(all_reduce(0, 8), 0);
  const int64_t small = all_reduce(1e6, 8);
  const int64_t big = all_reduce(1e8, 8);
  EXPECT_GT(small, 0);
  EXPECT_GT(big, 50 * small);
  // Two TensorCores of one chip share HBM: 2·(1/2)·bytes at 1.2 TB/s times Efficiency::hbm.
  EXPECT_EQ(
      all_reduce(1.2e9, 2),
      static_cast<int64_t>(std::ceil(1.2e9 / (1200e9 * kDefaultEfficiency.hbm) * V4().clock_hz)));
  // Across chips ICI is the slow part.
  EXPECT_GT(all_reduce(1e8, 8), 5 * all_reduce(1e8, 2));
}

TEST(Names, ParseAndPrintRoundTrip) {
  for (Dataflow df : {kWs, kOs, kIs}) {
    const Result<Dataflow> parsed = ParseDataflow(DataflowName(df));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, df);
  }
  EXPECT_EQ(ParseDataflow("xs").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(*ParseTimingMode("scalesim"), TimingMode::kScaleSim);
  EXPECT_EQ(*ParseTimingMode("tpu"), TimingMode::kTpu);
  EXPECT_FALSE(ParseTimingMode("gpu").ok());
}

}  // namespace
}  // namespace tpuemu::engine
