// FiguresFromHloModule: an HLO module's cost rows as comparison figures — their sums equal the
// module's estimate, weights are the parameters a training step returns, a module of several
// devices scales its batch-carrying rows — and the "hlo" source of a comparison request.
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/cost/compare.h"
#include "engine/cost/compare_request.h"
#include "engine/cost/program_profile.h"
#include "engine/hlo/cost_model.h"
#include "engine/hlo/parser.h"
#include "tests/engine/hlo/hlo_test_util.h"

namespace tpuemu::engine::cost {
namespace {

using ::testing::HasSubstr;

using hlo::testing::MustParse;
using hlo::testing::Testdata;  // tests/engine/hlo/testdata/<name>

hlo::ModuleCost MustEstimate(const hlo::Module& module) {
  Result<hlo::ModuleCost> c = hlo::PriceModule(module, Slice::FromAcceleratorType("v5p-8").value());
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? std::move(c).value() : hlo::ModuleCost{};
}

TEST(HloFigures, TheSumsAreTheModulesEstimate) {
  const hlo::Module m = MustParse(Testdata("mlp_train_step.hlo"));
  const hlo::ModuleCost estimate = MustEstimate(m);
  Result<ProgramFigures> f = FiguresFromHloModule(m);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->source, "hlo");
  EXPECT_EQ(f->name, "jit_mlp_train_step");
  double mxu = 0, vpu = 0, bytes = 0;
  for (const InstructionCost& in : f->instructions) {
    mxu += in.flops;
    vpu += in.vpu_ops;
    bytes += in.hbm_bytes;
    EXPECT_EQ(in.name.front(), '%');
    EXPECT_TRUE(in.carries_batch) << in.name;  // the loop state holds the batch
  }
  EXPECT_GT(estimate.mxu_flops, 0);
  EXPECT_DOUBLE_EQ(mxu, estimate.mxu_flops);
  EXPECT_DOUBLE_EQ(mxu + vpu, estimate.flops);
  EXPECT_DOUBLE_EQ(bytes, estimate.hbm_bytes);
  // Weights: w1 [3,4], b1 [4], w2 [4,2], b2 [2] (returned updated); data: x [4,3], y [4,2].
  EXPECT_DOUBLE_EQ(f->parameter_count, 12 + 4 + 8 + 2);
  EXPECT_DOUBLE_EQ(f->parameter_bytes, 26 * 4);
  EXPECT_DOUBLE_EQ(f->gradient_bytes, 26 * 4);
  EXPECT_EQ(f->global_batch, 4);
  // The forward dot, three loop trips: a [4,3]·[3,4] GEMM three times.
  bool found = false;
  for (const InstructionCost& in : f->instructions) {
    if (in.name != "%h_dot") continue;
    found = true;
    EXPECT_TRUE(in.on_mxu);
    EXPECT_EQ(in.gemm, (GemmShape{4, 4, 3}));
    EXPECT_EQ(in.gemm_batch, 3);
    EXPECT_DOUBLE_EQ(in.flops, 3 * 2.0 * 4 * 4 * 3);
  }
  EXPECT_TRUE(found);
  const StepProfile p = ProfileFromFigures(*f);
  EXPECT_TRUE(p.training);
  EXPECT_DOUBLE_EQ(p.model_flops, estimate.mxu_flops);
}

// Two replicas, each with its half of the batch: batch-carrying rows count twice, the
// weights-only row once; the all-reduce is left to the comparison.
constexpr const char* kTwoReplicas = R"(HloModule dp, replica_count=2
add { a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b) }
ENTRY e {
  w = f32[16,8] parameter(0)
  x = f32[32,16] parameter(1)
  y = f32[32,8] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  g = f32[16,8] dot(x, y), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  sum = f32[16,8] all-reduce(g), replica_groups={}, to_apply=add
  decay = f32[16,8] multiply(w, w)
  step = f32[16,8] subtract(sum, decay)
  ROOT new_w = f32[16,8] subtract(w, step)
}
)";

TEST(HloFigures, SeveralDevicesAreDataParallel) {
  const hlo::Module m = MustParse(kTwoReplicas);
  const hlo::ModuleCost estimate = MustEstimate(m);
  Result<ProgramFigures> f = FiguresFromHloModule(m);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->global_batch, 64);  // 32 per device
  EXPECT_DOUBLE_EQ(f->parameter_count, 16 * 8);
  double mxu = 0;
  for (const InstructionCost& in : f->instructions) {
    mxu += in.flops;
    EXPECT_NE(in.name, "%sum");  // collectives: the comparison's
    if (in.name == "%decay") {
      EXPECT_FALSE(in.carries_batch);
    }
    if (in.name == "%y") {
      EXPECT_TRUE(in.carries_batch);
      EXPECT_EQ(in.gemm, (GemmShape{64, 8, 16}));  // both devices' rows
    }
  }
  EXPECT_DOUBLE_EQ(mxu, 2 * estimate.mxu_flops);
}

TEST(HloFigures, AnInferenceModuleTakesItsLastArrayAsTheBatch) {
  const hlo::Module m = MustParse(R"(HloModule infer
ENTRY e {
  w = bf16[128,64] parameter(0)
  x = bf16[256,128] parameter(1)
  ROOT y = f32[256,64] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)");
  Result<ProgramFigures> f = FiguresFromHloModule(m);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->global_batch, 256);
  EXPECT_DOUBLE_EQ(f->parameter_bytes, 128 * 64 * 2);
  EXPECT_DOUBLE_EQ(f->gradient_bytes, 0);
  EXPECT_FALSE(ProfileFromFigures(*f).training);
  Result<ProgramFigures> batch = FiguresFromHloModule(m, 1024);
  ASSERT_TRUE(batch.ok());
  EXPECT_EQ(batch->global_batch, 1024);
}

TEST(HloFigures, UnsupportedInstructionsFailUnlessAllowed) {
  const hlo::Module m = MustParse(R"(HloModule cc
ENTRY e {
  x = f32[8] parameter(0)
  ROOT y = f32[8] custom-call(x), custom_call_target="my_kernel"
}
)");
  Result<ProgramFigures> f = FiguresFromHloModule(m);
  ASSERT_FALSE(f.ok());
  EXPECT_THAT(f.status().message(), HasSubstr("my_kernel"));
  EXPECT_TRUE(FiguresFromHloModule(m, 0, /*allow_unsupported=*/true).ok());
}

TEST(HloFigures, TheHloSourceOfAComparisonRequest) {
  nlohmann::json body = {{"hlo", {{"text", Testdata("mlp_train_step.hlo")}}},
                         {"acceleratorTypes", {"v5p-8", "v5e"}}};
  Result<CompareRequest> r = ParseCompareRequest(body);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const StepProfile& p = std::get<StepProfile>(r->source);
  EXPECT_EQ(p.source, "hlo");
  EXPECT_EQ(p.global_batch, 4);
  const hlo::ModuleCost estimate = MustEstimate(MustParse(Testdata("mlp_train_step.hlo")));
  EXPECT_DOUBLE_EQ(p.model_flops, estimate.mxu_flops);
  Result<Comparison> c = Compare(r->source, r->options);
  ASSERT_TRUE(c.ok()) << c.status().ToString();

  body["batch"] = 64;
  r = ParseCompareRequest(body);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(std::get<StepProfile>(r->source).global_batch, 64);

  auto error = [](const nlohmann::json& b) {
    Result<CompareRequest> bad = ParseCompareRequest(b);
    EXPECT_FALSE(bad.ok());
    return bad.status().message();
  };
  EXPECT_THAT(error({{"hlo", {{"text", "HloModule m\nENTRY e {\n  x = f32[2] parameter(0\n}"}}}}),
              HasSubstr("hlo: HLO text line 4, column 1"));
  EXPECT_THAT(error({{"hlo", {{"txt", "x"}}}}), HasSubstr("hlo.txt is not a known field"));
  EXPECT_THAT(error({{"hlo", "HloModule m"}}), HasSubstr("hlo must be an object"));
  EXPECT_THAT(error({{"hlo", {{"text", "x"}}}, {"model", {{"preset", "llama2-7b"}}}}),
              HasSubstr("exactly one of model, program, hlo or workload"));
}

}  // namespace
}  // namespace tpuemu::engine::cost
