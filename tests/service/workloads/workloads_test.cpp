// The transformer workload: spec validation names the field, the backward pass matches finite
// differences of the loss, the attention dots run on the MXU, and SGD makes the loss fall.
#include <gtest/gtest.h>

#include <cmath>

#include "engine/frontend/compiler.h"
#include "engine/frontend/graph_program.h"
#include "service/jobs/job_spec.h"
#include "service/jobs/step_runner.h"
#include "service/workloads/workloads.h"

namespace tpuemu::service {
namespace {

using nlohmann::json;

Status SpecError(const std::string& text, const JobLimits& limits = {}) {
  return ParseJobSpec(json::parse(text), limits).status();
}

TEST(TransformerSpecTest, DefaultsRoundTripAndErrorsNameTheField) {
  Result<JobSpec> spec = ParseJobSpec(json::parse(R"({"workload": {"transformer": {}}})"));
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(spec->kind, WorkloadKind::kTransformer);
  EXPECT_EQ(spec->d_model % spec->heads, 0);
  Result<JobSpec> again = ParseJobSpec(JobSpecToJson(*spec));
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(JobSpecHash(*again), JobSpecHash(*spec));
  EXPECT_EQ(JobSpecToJson(*spec)["workload"]["transformer"]["dModel"], spec->d_model);

  EXPECT_EQ(SpecError(R"({"workload": {"transformer": {"dModel": 30, "heads": 4}}})").message(),
            "workload.transformer.heads must divide dModel (30)");
  EXPECT_EQ(SpecError(R"({"workload": {"transformer": {"layers": 0}}})").message(),
            "workload.transformer.layers must be 1..64");
  EXPECT_EQ(SpecError(R"({"workload": {"transformer": {"seqLen": "x"}}})").message(),
            "workload.transformer.seqLen must be an integer");
  EXPECT_EQ(SpecError(R"({"workload": {"transformer": {"vocab": 3}}})").message(),
            "workload.transformer.vocab is not a known field");
  EXPECT_EQ(SpecError(R"({"workload": {"transformer": {"batch": 6}}, "cores": 4})").message(),
            "cores must divide workload.transformer.batch (6)");
  JobLimits small;
  small.max_tensor_elements = 4096;
  Status big = SpecError(R"({"workload": {"transformer": {"batch": 1, "seqLen": 64, "heads": 2,
                                                          "dModel": 8}}})",
                         small);
  EXPECT_EQ(big.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(big.message().starts_with("workload.transformer.seqLen makes the attention scores"))
      << big.message();
  EXPECT_TRUE(big.message().ends_with("above the limit of 4096")) << big.message();
}

// Each gradient output matches (loss(w + e) - loss(w - e)) / 2e for a few elements of every
// weight, in f32 on the MXU (Precision::kF32) so rounding does not hide a wrong formula.
TEST(TransformerWorkloadTest, GradientsMatchFiniteDifferences) {
  JobSpec spec = *ParseJobSpec(json::parse(
      R"({"workload": {"transformer": {"layers": 2, "dModel": 8, "heads": 2, "seqLen": 4,
                                       "batch": 2}}, "seed": 3})"));
  Result<Workload> w = Workload::Build(spec);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  // The step as jobs run it: lowered to HLO, at f32 precision so the differences are real.
  auto hlo = engine::hlo::HloGraphProgram::Lower(w->graph());
  ASSERT_TRUE(hlo.ok()) << hlo.status().ToString();
  std::map<std::string, engine::Tensor> feeds = w->Feeds(0);
  auto run = [&](const std::map<std::string, engine::Tensor>& f) {
    engine::FeedView view;
    for (const auto& [id, t] : f) view[id] = &t;
    return (*hlo)->Run(w->graph(), view, engine::Precision::kF32);
  };
  auto base = run(feeds);
  ASSERT_TRUE(base.ok()) << base.status().ToString();
  auto loss_at = [&](const std::string& wid, int64_t i, float delta) {
    std::map<std::string, engine::Tensor> f = feeds;
    f.at(wid).f32()[i] += delta;
    auto r = run(f);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? static_cast<double>(r->at("loss").f32()[0]) : 0.0;
  };
  int checked = 0;
  const std::pair<const char*, const char*> weights[] = {
      {"wout", "dwout"},   {"l1.w2", "l1.dw2"}, {"l1.w1", "l1.dw1"}, {"l1.wo", "l1.dwo"},
      {"l0.wq", "l0.dwq"}, {"l0.wk", "l0.dwk"}, {"l0.wv", "l0.dwv"}};
  for (const auto& [wid, grad_id] : weights) {
    ASSERT_TRUE(base->count(grad_id)) << grad_id;
    const engine::Tensor& g = base->at(grad_id);
    for (int64_t i : {int64_t{0}, g.num_elements() / 2, g.num_elements() - 1}) {
      const float eps = 1e-2f;
      const double numeric = (loss_at(wid, i, eps) - loss_at(wid, i, -eps)) / (2 * eps);
      EXPECT_NEAR(g.f32()[i], numeric, 2e-3 + 0.05 * std::abs(numeric)) << wid << "[" << i << "]";
      ++checked;
    }
  }
  EXPECT_EQ(checked, 21);
}

TEST(TransformerWorkloadTest, LossFallsAndAttentionRunsOnTheMxu) {
  JobSpec spec = *ParseJobSpec(json::parse(
      R"({"workload": {"transformer": {"layers": 2, "dModel": 16, "heads": 2, "seqLen": 8,
                                       "batch": 8, "steps": 30}}, "cores": 2})"));
  Result<Workload> w = Workload::Build(spec);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_EQ(w->shards(), 2);
  engine::Slice slice = *engine::Slice::FromAcceleratorType("v4-8");
  auto program = engine::Compile(w->graph(), slice, {});
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  // Per layer 3 projections, scores, context, output, up, down forward; the batched attention
  // dots have a batch of shard_batch · heads.
  int forward_dots = 0, batched = 0;
  for (const engine::OpPlan& p : (*program)->plans) {
    if (p.kind != engine::OpKind::kDot) continue;
    EXPECT_TRUE(p.on_mxu) << p.id;
    const std::string op = p.id.substr(p.id.find('.') + 1);
    forward_dots += op == "q" || op == "k" || op == "v" || op == "scores" || op == "ctxh" ||
                    op == "attn" || op == "up" || op == "down";
    batched += p.batch == 4 * 2;
  }
  EXPECT_EQ(forward_dots, 2 * 8);
  EXPECT_EQ(batched, 2 * (2 + 4));  // scores, ctx forward; dprobs, dvh, dqh, dkh backward
  auto runner = StepRunner::Create(**program, *w, slice, w->shards());
  ASSERT_TRUE(runner.ok()) << runner.status().ToString();
  std::vector<double> losses;
  for (int step = 0; step < 30; ++step) {
    Result<db::JobStepRow> row = (*runner)->Run(step);
    ASSERT_TRUE(row.ok()) << row.status().ToString();
    losses.push_back(*row->loss);  // the mean over the two shards
    ASSERT_TRUE(std::isfinite(losses.back())) << "step " << step;
  }
  EXPECT_LT(losses.back(), losses.front() * 0.6)
      << "first " << losses.front() << " last " << losses.back();
}

}  // namespace
}  // namespace tpuemu::service
