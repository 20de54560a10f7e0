// The GPU context rows (engine/cost/gpu_reference.h): each figure follows from its cited inputs —
// the published peak, HBM and price, the assumed MFU and MBU — and the rows reach the comparison
// beside, never inside, its TPU rows, marked as outside the TPU model.
#include "engine/cost/gpu_reference.h"

#include <gtest/gtest.h>

#include "engine/cost/compare.h"
#include "engine/cost/compare_report.h"
#include "engine/cost/compare_request.h"
#include "engine/cost/gpu_reference_report.h"

namespace tpuemu::engine::cost {
namespace {

using nlohmann::json;

const GpuSpec& GpuNamed(const std::string& name) {
  for (const GpuSpec& g : GpuSpecs()) {
    if (g.name == name) return g;
  }
  ADD_FAILURE() << "no GPU " << name;
  return GpuSpecs().front();
}

TransformerShape GpuTestPreset(const std::string& name) {
  Result<TransformerShape> s = ParseTransformerShape({{"preset", name}});
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return *s;
}

TEST(GpuReference, ThePublishedFiguresWithTheirSources) {
  ASSERT_EQ(GpuSpecs().size(), 2u);
  const GpuSpec& h100 = GpuNamed("H100 SXM");
  const GpuSpec& h200 = GpuNamed("H200 SXM");
  EXPECT_EQ(h100.peak_bf16_flops, 989e12);
  EXPECT_EQ(h200.peak_bf16_flops, 989e12);
  EXPECT_EQ(h100.hbm_bytes, 80e9);
  EXPECT_EQ(h100.hbm_bytes_per_second, 3.35e12);
  EXPECT_EQ(h200.hbm_bytes, 141e9);
  EXPECT_EQ(h200.hbm_bytes_per_second, 4.8e12);
  EXPECT_EQ(h100.machine_type, "a3-highgpu-8g");
  EXPECT_EQ(h200.machine_type, "a3-ultragpu-8g");
  EXPECT_EQ(h100.on_demand_usd_per_gpu_hour, 10.9791);
  EXPECT_EQ(h200.on_demand_usd_per_gpu_hour, 10.4365);
  for (const GpuSpec& g : GpuSpecs()) {
    EXPECT_EQ(g.gpus, 8);
    EXPECT_EQ(g.training_mfu, 0.43);
    EXPECT_EQ(g.serving_mbu, 0.60);
    EXPECT_NE(g.mfu_source.find("arXiv:2407.21783"), std::string::npos);
    EXPECT_NE(g.mbu_source.find("databricks.com"), std::string::npos);
    EXPECT_NE(g.price_source.find("Cloud Billing Catalog API"), std::string::npos);
    EXPECT_EQ(g.price_as_of.size(), 10u) << g.price_as_of;  // a date
  }
}

// One second of the machine at its assumed MFU: the step takes a second and a million tokens
// cost eight GPU-hours' worth of the per-second rate.
TEST(GpuReference, TrainingIsThePeakTimesTheMfu) {
  const GpuSpec& h100 = GpuNamed("H100 SXM");
  const double flops = 8 * 989e12 * 0.43;
  const GpuTraining t = EstimateGpuTraining(h100, flops, 1e6, 7e9);
  EXPECT_DOUBLE_EQ(t.step_seconds, 1.0);
  EXPECT_DOUBLE_EQ(t.units_per_second, 1e6);
  EXPECT_DOUBLE_EQ(t.units_per_second_per_gpu, 125000);
  EXPECT_DOUBLE_EQ(t.usd_per_million_units_on_demand, 10.9791 / (125000.0 * 3600) * 1e6);
  EXPECT_DOUBLE_EQ(t.usd_per_million_units_spot, 6.571 / (125000.0 * 3600) * 1e6);
  EXPECT_DOUBLE_EQ(t.state_bytes_per_gpu, 16 * 7e9 / 8);
  EXPECT_TRUE(t.fits);
  // 70B parameters: 140 GB of training state per GPU — over the H100's 80 GB, inside the H200's
  // 141 GB.
  const GpuTraining big = EstimateGpuTraining(h100, flops, 1e6, 70e9);
  EXPECT_FALSE(big.fits);
  EXPECT_NE(big.problem.find("at least 2 machines"), std::string::npos) << big.problem;
  EXPECT_TRUE(EstimateGpuTraining(GpuNamed("H200 SXM"), flops, 1e6, 70e9).fits);
}

// Llama-2-7B, one sequence on one GPU: the decode step reads the bf16 weights and the sequence's
// KV cache at 60% of HBM bandwidth, so the H200 is faster by exactly its bandwidth ratio.
TEST(GpuReference, ServingIsTheDecodeRoofline) {
  const TransformerShape s = GpuTestPreset("llama2-7b");
  ServingOptions o;
  o.batch = 1;
  o.tp = 1;
  const GpuServing h100 = EstimateGpuServing(GpuNamed("H100 SXM"), s, o);
  ASSERT_TRUE(h100.fits) << h100.problem;
  EXPECT_EQ(h100.tp, 1);
  EXPECT_EQ(h100.replicas, 8);
  const double weights = TransformerParameters(s) * 2;
  const double kv = (1024 + 1024 / 2) * 2.0 * 32 * 32 * 128 * 2;  // mean context, K and V, bf16
  EXPECT_DOUBLE_EQ(h100.weights_bytes_per_gpu, weights);
  EXPECT_DOUBLE_EQ(h100.kv_bytes_per_gpu, kv);
  EXPECT_DOUBLE_EQ(h100.decode_step_seconds, (weights + kv) / (3.35e12 * 0.6));
  EXPECT_EQ(h100.decode_bound, "HBM bandwidth");
  EXPECT_GT(h100.prefill_seconds, 0);
  const GpuServing h200 = EstimateGpuServing(GpuNamed("H200 SXM"), s, o);
  EXPECT_DOUBLE_EQ(h200.decode_step_seconds / h100.decode_step_seconds, 3.35 / 4.8);
  // Dollars per million output tokens from the price per GPU-hour and the tokens per GPU.
  EXPECT_DOUBLE_EQ(h100.usd_per_million_output_tokens_on_demand,
                   10.9791 / (h100.output_tokens_per_second_per_gpu * 3600) * 1e6);
  // The steady state: each sequence's prefill between decode steps.
  EXPECT_DOUBLE_EQ(h100.output_tokens_per_second_per_gpu,
                   1024 / (h100.prefill_seconds + 1024 * h100.decode_step_seconds));
}

TEST(GpuReference, ServingPicksTheGroupAndSaysWhatDoesNotFit) {
  const TransformerShape s = GpuTestPreset("llama2-70b");
  ServingOptions o;  // largest batch, the cheapest group
  const GpuServing best = EstimateGpuServing(GpuNamed("H100 SXM"), s, o);
  ASSERT_TRUE(best.fits) << best.problem;
  EXPECT_GE(best.tp, 2);        // 138 GB of bf16 weights do not fit one 80 GB GPU
  EXPECT_LE(best.batch, 1024);  // vLLM's --max-num-seqs
  EXPECT_EQ(best.batch, std::min<int64_t>(best.max_batch, 1024));
  o.tp = 1;
  const GpuServing one = EstimateGpuServing(GpuNamed("H100 SXM"), s, o);
  EXPECT_FALSE(one.fits);
  EXPECT_EQ(one.max_batch, 0);
  EXPECT_NE(one.problem.find("does not fit"), std::string::npos) << one.problem;
  o.tp = 3;
  EXPECT_NE(EstimateGpuServing(GpuNamed("H100 SXM"), s, o).problem.find("does not divide"),
            std::string::npos);
  o.tp = 0;
  o.batch = 100000;
  const GpuServing crowded = EstimateGpuServing(GpuNamed("H100 SXM"), s, o);
  EXPECT_FALSE(crowded.fits);
  EXPECT_NE(crowded.problem.find("batch too large"), std::string::npos) << crowded.problem;
}

// The comparison carries the GPU rows apart from its TPU rows; the reply marks them.
TEST(GpuReference, TheComparisonCarriesThemApartAndMarked) {
  Result<CompareRequest> r = ParseCompareRequest(json{{"model", {{"preset", "llama2-7b"}}},
                                                      {"acceleratorTypes", {"v6e-8"}},
                                                      {"serving", json::object()}});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  Result<Comparison> c = Compare(r->source, r->options);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_EQ(c->rows.size(), 1u);
  ASSERT_EQ(c->gpu_reference.size(), 2u);
  for (const GpuReferenceRow& row : c->gpu_reference) {
    ASSERT_TRUE(row.training);
    ASSERT_TRUE(row.serving);
    // Training from the comparison's own model FLOPs per token.
    EXPECT_DOUBLE_EQ(row.training->units_per_second_per_gpu * c->model_flops / c->units_per_step,
                     989e12 * 0.43);
  }
  const json j = ComparisonToJson(*c, r->options.prices);
  ASSERT_EQ(j["rows"].size(), 1u);
  ASSERT_EQ(j["gpuReference"].size(), 2u);
  for (const json& g : j["gpuReference"]) {
    EXPECT_EQ(g["outsideTpuModel"], true);
    EXPECT_GT(g["serving"]["outputTokensPerSecondPerGpu"].get<double>(), 0);
    EXPECT_DOUBLE_EQ(g["serving"]["outputTokensPerSecond"].get<double>(),
                     8 * g["serving"]["outputTokensPerSecondPerGpu"].get<double>());
    EXPECT_EQ(g["prices"]["unit"], "USD per GPU-hour");
  }
  // The CLI's text table prints them under the TPU tables, marked.
  const std::string table = ComparisonToTable(*c);
  const size_t gpus = table.find("GPUs for context, OUTSIDE the TPU model");
  ASSERT_NE(gpus, std::string::npos) << table;
  EXPECT_GT(gpus, table.find("Serving llama2-7b"));
  EXPECT_NE(table.find("H200 SXM", gpus), std::string::npos);
  EXPECT_NE(table.find("arXiv:2407.21783", gpus), std::string::npos);
  // A program: training only (no shape to serve).
  Result<CompareRequest> p = ParseCompareRequest(json::parse(R"({"program": {"name": "p",
      "ops": [{"id": "x", "op": "parameter", "shape": [32, 64]},
              {"id": "w", "op": "constant", "shape": [64, 64], "fill": 0.5},
              {"id": "y", "op": "dot", "inputs": ["x", "w"]}], "outputs": ["y"]},
      "acceleratorTypes": ["v6e-1"]})"));
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  Result<Comparison> pc = Compare(p->source, p->options);
  ASSERT_TRUE(pc.ok());
  ASSERT_EQ(pc->gpu_reference.size(), 2u);
  EXPECT_FALSE(pc->gpu_reference[0].serving);
  EXPECT_EQ(pc->gpu_reference[0].training.has_value(), pc->model_flops > 0);
}

}  // namespace
}  // namespace tpuemu::engine::cost
