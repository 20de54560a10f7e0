// Serving (engine/cost/serving.h): the KV cache and batch arithmetic by hand and the engines'
// profiles (serving_engine.h). The published serving runs, in and out of sample, are
// calibration_split_test.cpp's.
#include "engine/cost/serving.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <vector>

namespace tpuemu::engine::cost {
namespace {

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

TEST(ServingEngines, StaticCacheReadsItsWholeLengthPagedTheRealOne) {
  // Short sequences in a long static cache: jetstream reads every slot over 4096 tokens, vllm
  // the 384 there are; ideal adds no framework time. Same batch, same chips.
  const AcceleratorType type = *FindAcceleratorType("v6e-8");
  ServingOptions o;
  o.batch = 64;
  o.tp = 8;
  o.input_len = 256;
  o.output_len = 256;
  o.cache_len = 4096;
  const TransformerShape llama = Preset("llama3-8b");
  const ServingEstimate jetstream = EstimateServing(llama, type, o, PriceTable::Default());
  o.engine = ServingEngine::kVllm;
  const ServingEstimate vllm = EstimateServing(llama, type, o, PriceTable::Default());
  o.engine = ServingEngine::kIdeal;
  const ServingEstimate ideal = EstimateServing(llama, type, o, PriceTable::Default());
  EXPECT_EQ(jetstream.engine, "jetstream");
  EXPECT_EQ(vllm.engine, "vllm");
  EXPECT_GT(jetstream.kv_bytes_per_chip, 8 * vllm.kv_bytes_per_chip);
  EXPECT_GT(ideal.output_tokens_per_second_per_chip, vllm.output_tokens_per_second_per_chip);
  EXPECT_EQ(ideal.step_overhead_seconds, 0);
  EXPECT_DOUBLE_EQ(vllm.step_overhead_seconds, kDefaultEfficiency.vllm_step_seconds);
  // Chunked prefill: the time to first token pays a step per chunk.
  o.engine = ServingEngine::kVllm;
  o.input_len = 4096;
  o.chunk_tokens = 512;
  const ServingEstimate chunked = EstimateServing(llama, type, o, PriceTable::Default());
  EXPECT_GE(chunked.prefill_seconds, 8 * kDefaultEfficiency.vllm_step_seconds);
}

TEST(ServingEngines, OptionsRoundTripAndNameTheirErrors) {
  const Result<ServingOptions> o = ParseServingOptions(
      {{"engine", "vllm"}, {"chunkTokens", 512}, {"cacheLen", 0}, {"shardOnBatch", true}});
  ASSERT_TRUE(o.ok()) << o.status().message();
  EXPECT_EQ(o->engine, ServingEngine::kVllm);
  EXPECT_EQ(o->ChunkTokens(), 512);
  EXPECT_EQ(ServingOptionsToJson(*o)["engine"], "vllm");
  EXPECT_EQ(ParseServingOptions({{"engine", "tgi"}}).status().message(),
            "serving.engine must be \"jetstream\", \"vllm\" or \"ideal\"");
}

TEST(ServingEngines, ServingNeedsOnlyTheModelsShape) {
  const nlohmann::json shape = {
      {"layers", 32}, {"dModel", 4096}, {"heads", 32}, {"ffn", 11008}, {"vocab", 32000}};
  EXPECT_FALSE(ParseTransformerShape(shape).ok());  // training needs seqLen and globalBatch
  const Result<TransformerShape> s = ParseTransformerShape(shape, ShapeUse::kServingOnly);
  ASSERT_TRUE(s.ok()) << s.status().message();
  const ServingEstimate e = EstimateServing(*s, *FindAcceleratorType("v5litepod-8"),
                                            ServingOptions{}, PriceTable::Default());
  EXPECT_TRUE(e.fits) << e.problem;
  EXPECT_GT(e.output_tokens_per_second_per_chip, 0);
}

}  // namespace
}  // namespace tpuemu::engine::cost
