// One chip model (engine/chip/chip_model.h): the same HLO module priced as a job prices it
// (engine/hlo/cost_model.h PriceModule) and as `estimate` / `compare` price it
// (engine/cost/hlo_figures.cpp -> estimate.h EstimatePlan) costs the same cycles, and the parts
// every path shares agree with each other.
#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "engine/chip/chip_model.h"
#include "engine/cost/estimate.h"
#include "engine/cost/program_profile.h"
#include "engine/hlo/cost_model.h"
#include "tests/engine/hlo/hlo_test_util.h"

namespace tpuemu::engine::cost {
namespace {

// f(params, x): a GEMM and an activation, each a row of its own (no fusion), on `devices`
// data-parallel devices (one per chip of the slice).
std::string Module(int devices) {
  return "HloModule one_chip, replica_count=" + std::to_string(devices) + R"(

ENTRY main {
  w = bf16[2048,4096] parameter(0)
  x = bf16[1024,2048] parameter(1)
  d = bf16[1024,4096] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = bf16[1024,4096] tanh(d)
}
)";
}

class OneChipModel : public ::testing::TestWithParam<const char*> {};

TEST_P(OneChipModel, AJobAndAnEstimateOfTheSameModuleCostTheSameCycles) {
  const Slice slice = Slice::FromAcceleratorType(GetParam()).value();
  const hlo::Module module = hlo::testing::MustParse(Module(slice.chips()));
  Result<hlo::ModuleCost> job = hlo::PriceModule(module, slice);
  ASSERT_TRUE(job.ok()) << job.status().ToString();

  Result<ProgramFigures> figures = FiguresFromHloModule(module);
  ASSERT_TRUE(figures.ok()) << figures.status().ToString();
  const StepProfile profile = ProfileFromFigures(*figures);
  const Estimate e =
      EstimatePlan(profile, slice.type(), Plan{Strategy::kDataParallel, 1}, PriceTable::Default());
  ASSERT_TRUE(e.feasible) << e.problem;
  const double clock = slice.spec().clock_hz;
  EXPECT_GT(job->cycles, 0);
  EXPECT_EQ(std::llround(e.step_seconds * clock), job->cycles)
      << GetParam() << ": estimate " << e.step_seconds << " s, job " << job->seconds << " s";
}

// One TensorCore per device (v5e, v6e) and megacore chips (v4, v5p: a device of two
// TensorCores), on one chip and on four.
INSTANTIATE_TEST_SUITE_P(Chips, OneChipModel,
                         ::testing::Values("v5litepod-1", "v6e-1", "v5litepod-4", "v6e-4", "v5p-8",
                                           "v4-8"));

TEST(OneChipModelParts, ACollectiveOnOneChipGoesThroughHbmAndAcrossChipsOverTheTorus) {
  const AcceleratorType v4 = FindAcceleratorType("v4-32").value();
  const ChipSpec& spec = Spec(v4.generation);
  const double bytes = 64.0 * 1024 * 1024;
  // Two TensorCores of one chip: a ring through HBM, nothing on ICI.
  const int64_t on_chip = TensorCoreCollectiveCycles(v4, Collective::kAllReduce, 2, bytes);
  EXPECT_EQ(on_chip, static_cast<int64_t>(std::ceil(
                         bytes / (spec.hbm_bandwidth_bytes_per_s * kDefaultEfficiency.hbm) *
                         spec.clock_hz)));
  // 16 chips: the torus group of ici.h plus the on-chip stage.
  const IciGroup group = CollectiveGroup(v4, 16);
  EXPECT_EQ(group.Chips(), 16);
  const double seconds = CollectiveSeconds(spec, Collective::kAllReduce, group, 2, bytes);
  EXPECT_DOUBLE_EQ(seconds, AllReduceSeconds(spec, group, bytes) +
                                bytes / (spec.hbm_bandwidth_bytes_per_s * kDefaultEfficiency.hbm));
  EXPECT_EQ(TensorCoreCollectiveCycles(v4, Collective::kAllReduce, 32, bytes),
            static_cast<int64_t>(std::ceil(seconds * spec.clock_hz)));
  // A gather is half of an all-reduce.
  EXPECT_NEAR(CollectiveSeconds(spec, Collective::kAllGather, group, 2, bytes), seconds / 2, 1e-12);
}

TEST(OneChipModelParts, TheMxuRunsAtItsCalibratedEfficiencyOnlyInTheTpuMode) {
  // Efficiency::mxu 0.79: 790 ideal cycles take 1000 (or 1001: the division rounds up).
  EXPECT_NEAR(MxuCycles(790, TimingMode::kTpu), 1000, 1);
  EXPECT_EQ(MxuCycles(820, TimingMode::kScaleSim), 820);
  EXPECT_EQ(VectorCycles(4096, 2), 2);
  EXPECT_EQ(VectorCycles(0, 1), 0);
}

TEST(OneChipModelParts, TheHostLinkIsThePerGenerationOne) {
  EXPECT_DOUBLE_EQ(HostLinkSeconds(Generation::kV6e, 3.2e10 * kDefaultEfficiency.host), 1.0);
  EXPECT_DOUBLE_EQ(HostLinkSeconds(Generation::kV5e, 1.5e10 * kDefaultEfficiency.host), 1.0);
}

}  // namespace
}  // namespace tpuemu::engine::cost
