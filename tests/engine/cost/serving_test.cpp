// Serving (engine/cost/serving.h): the KV cache and batch arithmetic by hand, and the model
// against published TPU serving throughputs (docs/cost-model.md, "Serving"): in-sample with the
// calibrated decode efficiency, and out of sample (refitted without the run). The test prints
// both tables and fails if the error grows beyond the bounds stated there.
#include "engine/cost/serving.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "tests/engine/cost/calibration.h"

namespace tpuemu::engine::cost {
namespace {

constexpr double kInSamplePercent = 15;  // worst published serving run, in sample
constexpr double kHeldOutPercent = 20;   // worst published serving run, left out of the fit

TransformerShape Preset(const char* name) { return *ParseTransformerShape({{"preset", name}}); }

TEST(Serving, KvCacheAndLargestBatchByHand) {
  // Llama-2-7B: 32 layers x 32 KV heads x 128 x (K and V) x 2 bytes = 512 KiB per token.
  const AcceleratorType type = *FindAcceleratorType("v5litepod-8");
  ServingOptions o;
  o.input_len = 1024;
  o.output_len = 1024;
  o.tp = 8;
  const ServingEstimate e = EstimateServing(Preset("llama2-7b"), type, o, PriceTable::Default());
  EXPECT_DOUBLE_EQ(e.kv_bytes_per_token, 32 * 32 * 128 * 2 * 2);
  EXPECT_DOUBLE_EQ(e.weights_bytes_per_chip, TransformerParameters(Preset("llama2-7b")) * 2 / 8);
  // The largest batch leaves less than one more slot (2048 tokens over 8 chips) free.
  const double slot = 2048.0 * e.kv_bytes_per_token / 8;
  EXPECT_TRUE(e.fits);
  EXPECT_EQ(e.batch, e.max_batch);
  EXPECT_LE(e.weights_bytes_per_chip + e.kv_bytes_per_chip, e.capacity_bytes);
  EXPECT_GT(e.weights_bytes_per_chip + e.kv_bytes_per_chip + 2 * slot, e.capacity_bytes);
  // int8 weights and cache: more room, a larger batch, a faster step per token.
  o.weight_bytes = o.kv_bytes = 1;
  const ServingEstimate q = EstimateServing(Preset("llama2-7b"), type, o, PriceTable::Default());
  EXPECT_GT(q.max_batch, 2 * e.max_batch - 2);
  EXPECT_GT(q.decode_tokens_per_second_per_chip, e.decode_tokens_per_second_per_chip);
}

TEST(Serving, DecodeIsBandwidthBoundAndTooLargeABatchDoesNotFit) {
  const AcceleratorType type = *FindAcceleratorType("v6e-8");
  ServingOptions o;
  o.batch = 8;
  const ServingEstimate small =
      EstimateServing(Preset("llama3-8b"), type, o, PriceTable::Default());
  EXPECT_EQ(small.decode_bound, "HBM bandwidth");
  EXPECT_GT(small.prefill_tokens_per_second_per_chip, small.decode_tokens_per_second_per_chip);
  EXPECT_GT(small.usd_per_million_output_tokens_on_demand, 0);
  o.batch = 100000;
  const ServingEstimate big = EstimateServing(Preset("llama3-8b"), type, o, PriceTable::Default());
  EXPECT_FALSE(big.fits);
  EXPECT_NE(big.problem.find("batch too large"), std::string::npos) << big.problem;
  // Llama-3-70B in bf16 (141 GB) cannot sit on one 32 GB chip.
  const ServingEstimate none = EstimateServing(Preset("llama3-70b"), *FindAcceleratorType("v6e-1"),
                                               ServingOptions{}, PriceTable::Default());
  EXPECT_FALSE(none.fits);
  EXPECT_EQ(none.max_batch, 0);
  EXPECT_NE(none.problem.find("does not fit"), std::string::npos) << none.problem;
}

TEST(Serving, PicksTheReplicaSizeThatIsCheapestPerToken) {
  // Llama-3-8B in bf16 (16 GB) fits one 32 GB v6e chip: eight one-chip replicas serve more per
  // chip than one replica split eight ways (no all-reduces, the same bytes per token).
  const AcceleratorType type = *FindAcceleratorType("v6e-8");
  ServingOptions o;
  o.batch = 16;
  o.input_len = 512;
  o.output_len = 512;
  const ServingEstimate best = EstimateServing(Preset("llama3-8b"), type, o, PriceTable::Default());
  ASSERT_TRUE(best.fits) << best.problem;
  EXPECT_EQ(best.tp * best.replicas, 8);
  o.tp = 8;
  const ServingEstimate all = EstimateServing(Preset("llama3-8b"), type, o, PriceTable::Default());
  EXPECT_EQ(all.tp, 8);
  EXPECT_EQ(all.replicas, 1);
  EXPECT_GE(best.output_tokens_per_second_per_chip, all.output_tokens_per_second_per_chip);
  EXPECT_LT(best.tp, 8);
  o.tp = 3;
  EXPECT_NE(EstimateServing(Preset("llama3-8b"), type, o, PriceTable::Default())
                .problem.find("serving.tp 3"),
            std::string::npos);
}

TEST(Serving, ErrorsNameTheField) {
  EXPECT_EQ(ParseServingOptions({{"weights", "fp4"}}).status().message(),
            "serving.weights must be \"bf16\" or \"int8\"");
  EXPECT_EQ(ParseServingOptions({{"inputLen", 0}}).status().message(),
            "serving.inputLen must be an integer in 1..2097152");
  EXPECT_EQ(ParseServingOptions({{"beams", 2}}).status().code(), StatusCode::kInvalidArgument);
}

TEST(ServingPublishedFigures, InSampleAndHeldOutErrorStayWithinTheStatedBounds) {
  const std::vector<PublishedServingRun>& runs = PublishedServingRuns();
  std::printf(
      "| Published serving run | Slice | Batch, lengths, weights | Published out tok/s | Ours "
      "(in sample) | Error | Ours (held out) | Error |\n|---|---|---|---|---|---|---|---|\n");
  double worst_in = 0, worst_out = 0, sum_in = 0, sum_out = 0;
  int counted = 0;
  for (size_t i = 0; i < runs.size(); ++i) {
    const PublishedServingRun& r = runs[i];
    const char* mark = r.illustrative ? " (illustrative: not in the fit or the bounds)" : "";
    std::vector<PublishedServingRun> rest;
    for (size_t j = 0; j < runs.size(); ++j) {
      if (j != i) rest.push_back(runs[j]);
    }
    const double in = EstimatedServing(r, kDefaultEfficiency);
    const Efficiency held = FitServing(rest);
    const double out = EstimatedServing(r, held);
    const double in_error = (in / r.output_tokens_per_second - 1) * 100;
    const double out_error = (out / r.output_tokens_per_second - 1) * 100;
    if (!r.illustrative) {
      worst_in = std::max(worst_in, std::abs(in_error));
      worst_out = std::max(worst_out, std::abs(out_error));
      sum_in += std::abs(in_error);
      sum_out += std::abs(out_error);
      ++counted;
    }
    std::printf(
        "| %s, %s%s | %s | %lld, %lld in / %lld out, %s | %.0f | %.0f | %+.0f%% | %.0f "
        "(serving_hbm %.2f, int8 %.2f) | %+.0f%% |\n",
        r.shape.name.c_str(), r.source.c_str(), mark, r.type.c_str(),
        static_cast<long long>(r.options.batch), static_cast<long long>(r.options.input_len),
        static_cast<long long>(r.options.output_len), r.options.weight_bytes == 1 ? "int8" : "bf16",
        r.output_tokens_per_second, in, in_error, out, held.serving_hbm, held.serving_hbm_int8,
        out_error);
  }
  const double n = counted;
  const Efficiency all = FitServing(runs);
  std::printf(
      "serving: fit on all: serving_hbm %.2f, int8 %.2f (efficiency.h %.2f, %.2f); in sample "
      "worst %.0f%% mean %.0f%%; held out worst %.0f%% mean %.0f%%\n",
      all.serving_hbm, all.serving_hbm_int8, kDefaultEfficiency.serving_hbm,
      kDefaultEfficiency.serving_hbm_int8, worst_in, sum_in / n, worst_out, sum_out / n);
  EXPECT_LE(worst_in, kInSamplePercent);
  EXPECT_LE(worst_out, kHeldOutPercent);
}

}  // namespace
}  // namespace tpuemu::engine::cost
