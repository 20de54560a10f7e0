// The whole comparison: candidates, plan choice, the request format (JSON and query) and the
// three renderings.
#include "engine/cost/compare.h"

#include <gtest/gtest.h>

#include "engine/cost/compare_report.h"
#include "engine/cost/compare_request.h"

namespace tpuemu::engine::cost {
namespace {

using nlohmann::json;

Comparison CompareBody(const json& body) {
  Result<CompareRequest> r = ParseCompareRequest(body);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  Result<Comparison> c = Compare(r->source, r->options);
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return *c;
}

const Estimate& Row(const Comparison& c, const std::string& type) {
  for (const TypeComparison& t : c.rows) {
    if (t.best.accelerator_type == type) return t.best;
  }
  ADD_FAILURE() << "no row for " << type;
  return c.rows.front().best;
}

TEST(Compare, CandidatesAreTypesAndGenerations) {
  Result<std::vector<AcceleratorType>> all = ResolveCandidates({});
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), AllAcceleratorTypes().size());
  Result<std::vector<AcceleratorType>> some = ResolveCandidates({"v5p-128", "v6e", "v5p-128"});
  ASSERT_TRUE(some.ok());
  EXPECT_EQ(some->size(), 9u);  // v5p-128 once, then the 8 v6e sizes, in catalog order
  EXPECT_EQ(some->front().name, "v5p-128");
  EXPECT_EQ(ResolveCandidates({"v9"}).status().code(), StatusCode::kNotFound);
}

TEST(Compare, PicksTheFastestPlanThatFitsOnEveryType) {
  const Comparison c = CompareBody({{"model", {{"preset", "llama2-7b"}}}, {"detail", true}});
  ASSERT_EQ(c.rows.size(), AllAcceleratorTypes().size());
  for (const TypeComparison& t : c.rows) {
    ASSERT_FALSE(t.plans.empty());
    for (const Estimate& e : t.plans) {
      if (e.fits) {
        EXPECT_TRUE(t.best.fits) << t.best.accelerator_type;
        EXPECT_LE(t.best.step_seconds, e.step_seconds) << t.best.accelerator_type;
      }
    }
  }
  // 6.7B parameters at 16 bytes each do not fit one 16 GiB v5e chip.
  const Estimate& one = Row(c, "v5litepod-1");
  EXPECT_FALSE(one.fits);
  EXPECT_NE(one.problem.find("does not fit"), std::string::npos) << one.problem;
  EXPECT_TRUE(Row(c, "v5p-128").fits);
}

TEST(Compare, TheNamedPlanIsTheOneUsed) {
  const Comparison c = CompareBody({{"model", {{"preset", "llama2-7b"}}},
                                    {"acceleratorTypes", {"v5p-64"}},
                                    {"strategy", "tp"},
                                    {"tp", 4},
                                    {"remat", "full"}});
  ASSERT_EQ(c.rows.size(), 1u);
  EXPECT_EQ(c.rows[0].best.plan.strategy, Strategy::kTensorParallel);
  EXPECT_EQ(c.rows[0].best.plan.tp, 4);
  EXPECT_EQ(c.rows[0].best.remat, "full");
  EXPECT_EQ(c.plans_evaluated, 1);
}

TEST(Compare, RequestErrorsNameTheField) {
  auto error = [](const json& body) { return ParseCompareRequest(body).status().message(); };
  EXPECT_EQ(error({{"acceleratorTypes", {"v4-8"}}}),
            "give exactly one of model, program, hlo or workload");
  EXPECT_EQ(error({{"model", {{"preset", "llama2-7b"}}}, {"strategy", "zero"}}),
            "strategy: unknown strategy 'zero' (expected auto, dp, fsdp or tp)");
  EXPECT_EQ(error({{"model", {{"preset", "llama2-7b"}}}, {"tp", 0}}),
            "tp must be an integer in 1..4096");
  EXPECT_EQ(error({{"workload", {{"mlp", json::object()}}}}),
            "workload (a built-in workload) is priced by tpuemud's /_emulator/compare; here give "
            "a model or a program");
  EXPECT_EQ(error({{"model", {{"preset", "llama2-7b"}}},
                   {"prices", {{"prices", {{{"generation", "v9"}}}}}}}),
            "prices[0].generation: unknown TPU generation 'v9' (expected v2, v3, v4, v5e, v5p or "
            "v6e)");
  Result<CompareRequest> r = ParseCompareRequest({{"model", {{"preset", "llama2-7b"}}}, {"tp", 2}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(Compare(r->source, r->options).status().message(),
            "tp: a tensor-parallel degree needs strategy tp");
}

TEST(Compare, PricesCanBeOverridden) {
  const Comparison c = CompareBody(
      {{"model", {{"preset", "llama2-7b"}}},
       {"acceleratorTypes", {"v6e-8"}},
       {"prices", {{"prices", {{{"generation", "v6e"}, {"onDemand", 10.0}, {"spot", 1.0}}}}}}});
  const Estimate& e = c.rows.at(0).best;
  EXPECT_DOUBLE_EQ(e.on_demand.per_hour, 80.0);
  EXPECT_DOUBLE_EQ(e.spot.per_hour, 8.0);
  EXPECT_NEAR(e.on_demand.per_million_units,
              e.on_demand.per_hour * e.step_seconds / 3600 / c.units_per_step * 1e6, 1e-9);
}

TEST(Compare, QueryStringIsTheSameRequest) {
  Result<json> body = CompareQueryToJson({{"preset", "llama2-7b"},
                                          {"seqLen", "2048"},
                                          {"acceleratorTypes", "v5e,v5p-128"},
                                          {"strategy", "fsdp"},
                                          {"gatedMlp", "true"}});
  ASSERT_TRUE(body.ok()) << body.status().ToString();
  EXPECT_EQ(*body, json::parse(R"({"model": {"preset": "llama2-7b", "seqLen": 2048,
      "gatedMlp": true}, "acceleratorTypes": ["v5e", "v5p-128"], "strategy": "fsdp"})"));
  EXPECT_EQ(CompareQueryToJson({{"layers", "3x"}}).status().message(),
            "layers must be an integer, got '3x'");
  EXPECT_EQ(CompareQueryToJson({{"colour", "red"}}).status().code(), StatusCode::kInvalidArgument);
}

TEST(Compare, ReportsAgreeWithTheEstimates) {
  const Comparison c = CompareBody(
      {{"model", {{"preset", "llama2-7b"}}}, {"acceleratorTypes", {"v5litepod-1", "v5p-128"}}});
  const json j = ComparisonToJson(c, PriceTable::Default());
  ASSERT_EQ(j["rows"].size(), 2u);
  EXPECT_EQ(j["unit"], "tokens");
  EXPECT_EQ(j["rows"][1]["acceleratorType"], "v5p-128");
  EXPECT_DOUBLE_EQ(j["rows"][1]["stepSeconds"].get<double>(), c.rows[1].best.step_seconds);
  EXPECT_DOUBLE_EQ(j["rows"][1]["onDemand"]["perMillionUnits"].get<double>(),
                   c.rows[1].best.on_demand.per_million_units);
  EXPECT_FALSE(j["rows"][0]["fits"].get<bool>());
  const std::string csv = ComparisonToCsv(c);
  EXPECT_EQ(csv.substr(0, csv.find(',')), "accelerator_type");
  EXPECT_NE(csv.find("\nv5p-128,v5p,64,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("usd_per_million_tokens_spot"), std::string::npos);
  const std::string table = ComparisonToTable(c);
  EXPECT_NE(table.find("v5litepod-1"), std::string::npos);
  EXPECT_NE(table.find("does not fit"), std::string::npos) << table;
}

TEST(Compare, AutoOffloadsWhenThatIsWhatFits) {
  // Llama-3.1-8B, 3 sequences of 8192 per v6e chip: on main it was reported as not fitting.
  const Comparison c = CompareBody({{"model", {{"preset", "llama3-8b"}, {"globalBatch", 24}}},
                                    {"acceleratorTypes", {"v6e-8"}},
                                    {"detail", true}});
  const Estimate& e = c.rows.at(0).best;
  EXPECT_TRUE(e.fits) << e.problem;
  EXPECT_GT(e.memory.host, 0);
  bool device_only_fits = false;
  for (const Estimate& p : c.rows.at(0).plans) {
    if (p.memory.host == 0 && p.fits) device_only_fits = true;
  }
  EXPECT_FALSE(device_only_fits) << "without offloading nothing should fit";
}

TEST(Compare, MemoryLeversOnlyWhenNothingElseFits) {
  // 70B on 8 v6e chips: the state alone (16 bytes a parameter) needs 140 GB a chip: nothing fits,
  // so optimizer offload and gradient accumulation are tried, and still it does not fit.
  const Comparison big = CompareBody(
      {{"model", {{"preset", "llama3-70b"}, {"globalBatch", 8}}}, {"acceleratorTypes", {"v6e-8"}}});
  EXPECT_FALSE(big.rows.at(0).best.fits);
  // A small model fits without them.
  const Comparison small = CompareBody({{"model", {{"preset", "llama2-7b"}, {"globalBatch", 64}}},
                                        {"acceleratorTypes", {"v5p-64"}}});
  EXPECT_TRUE(small.rows.at(0).best.fits);
  EXPECT_EQ(small.rows.at(0).best.plan.microbatches, 1);
  EXPECT_FALSE(small.rows.at(0).best.plan.offload_optimizer);
  // Named, they apply.
  const Comparison named = CompareBody({{"model", {{"preset", "llama2-7b"}, {"globalBatch", 64}}},
                                        {"acceleratorTypes", {"v5p-64"}},
                                        {"microbatches", 2},
                                        {"offloadOptimizer", true}});
  const Estimate& n = named.rows.at(0).best;
  EXPECT_EQ(n.plan.microbatches, 2);
  EXPECT_TRUE(n.plan.offload_optimizer);
  EXPECT_EQ(n.memory.optimizer, 0);
  EXPECT_GT(n.memory.host, 0);
  EXPECT_GT(n.step_seconds, small.rows.at(0).best.step_seconds);
}

TEST(Compare, MixtureOfExpertsTriesExpertParallelism) {
  const Comparison c =
      CompareBody({{"model", {{"preset", "mixtral-8x7b"}, {"capacityFactor", 1.25}}},
                   {"acceleratorTypes", {"v6e-256"}},
                   {"detail", true}});
  bool tried_ep = false;
  for (const Estimate& e : c.rows.at(0).plans) tried_ep = tried_ep || e.plan.ep > 1;
  EXPECT_TRUE(tried_ep);
  const Comparison ep = CompareBody({{"model", {{"preset", "mixtral-8x7b"}}},
                                     {"acceleratorTypes", {"v6e-256"}},
                                     {"strategy", "fsdp"},
                                     {"ep", 4}});
  EXPECT_EQ(ep.rows.at(0).best.plan.ep, 4);
  EXPECT_GT(ep.rows.at(0).best.collective_seconds, 0);
  const Comparison dense = CompareBody({{"model", {{"preset", "llama2-7b"}}},
                                        {"acceleratorTypes", {"v6e-8"}},
                                        {"strategy", "fsdp"},
                                        {"ep", 2}});
  EXPECT_FALSE(dense.rows.at(0).best.feasible);
  EXPECT_NE(dense.rows.at(0).best.problem.find("mixture-of-experts"), std::string::npos);
}

TEST(Compare, ServingAndItsQueryForm) {
  Result<json> body = CompareQueryToJson({{"preset", "llama2-7b"},
                                          {"capacityFactor", "1.5"},
                                          {"remat", "qkv_proj_offloaded"},
                                          {"serving.batch", "8"},
                                          {"serving.weights", "int8"},
                                          {"microbatches", "2"}});
  ASSERT_TRUE(body.ok()) << body.status().ToString();
  EXPECT_EQ((*body)["serving"], json({{"batch", 8}, {"weights", "int8"}}));
  EXPECT_EQ((*body)["model"]["capacityFactor"], 1.5);
  EXPECT_EQ((*body)["microbatches"], 2);
  EXPECT_EQ(CompareQueryToJson({{"preset", "llama2-7b"}, {"serving.batch", "x"}}).status().code(),
            StatusCode::kInvalidArgument);
  const Comparison c = CompareBody({{"model", {{"preset", "llama2-7b"}}},
                                    {"acceleratorTypes", {"v5litepod-8"}},
                                    {"serving", {{"batch", 8}}}});
  ASSERT_TRUE(c.rows.at(0).serving.has_value());
  EXPECT_EQ(c.rows.at(0).serving->batch, 8);
  const auto j = ComparisonToJson(c, PriceTable::Default());
  EXPECT_EQ(j["rows"][0]["serving"]["batch"], 8);
  EXPECT_NE(ComparisonToTable(c).find("Serving llama2-7b"), std::string::npos);
  EXPECT_NE(ComparisonToCsv(c).find("serving_batch"), std::string::npos);
  EXPECT_EQ(ParseCompareRequest({{"model", {{"preset", "llama2-7b"}}}, {"serving", 3}})
                .status()
                .message(),
            "serving must be an object");
  EXPECT_EQ(ParseCompareRequest({{"model", {{"preset", "llama2-7b"}}}, {"remat", {{"x", 1}}}})
                .status()
                .code(),
            StatusCode::kInvalidArgument);
}

TEST(Compare, FewerSequencesThanChipsUseContextParallelism) {
  // 4 sequences on 8 chips (per_device_batch_size 0.5): only context parallelism runs it.
  const Comparison c = CompareBody(
      {{"model", {{"preset", "llama3-8b"}, {"globalBatch", 4}}}, {"acceleratorTypes", {"v6e-8"}}});
  const Estimate& e = c.rows.at(0).best;
  EXPECT_TRUE(e.fits) << e.problem;
  EXPECT_GE(e.plan.cp, 2);
  EXPECT_EQ(ComparisonToJson(c, PriceTable::Default())["rows"][0]["cp"], e.plan.cp);
  // Named (with fsdp alone: tensor parallelism, its all-reduces hidden under the layers'
  // compute, runs 4 sequences on 8 chips faster than cp 4).
  const Comparison cp = CompareBody({{"model", {{"preset", "llama3-8b"}, {"globalBatch", 4}}},
                                     {"acceleratorTypes", {"v6e-8"}},
                                     {"strategy", "fsdp"},
                                     {"cp", 4}});
  EXPECT_EQ(cp.rows.at(0).best.plan.cp, 4);
  EXPECT_NE(cp.rows.at(0).best.collective_seconds, 0);
  Result<json> q = CompareQueryToJson({{"preset", "llama3-8b"}, {"cp", "2"}});
  ASSERT_TRUE(q.ok());
  EXPECT_EQ((*q)["cp"], 2);
}

}  // namespace
}  // namespace tpuemu::engine::cost
