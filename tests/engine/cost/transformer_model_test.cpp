#include "engine/cost/transformer_model.h"

#include <gtest/gtest.h>

#include "engine/cost/estimate.h"

namespace tpuemu::engine::cost {
namespace {

TransformerShape Parse(const nlohmann::json& j) {
  Result<TransformerShape> s = ParseTransformerShape(j);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? *s : TransformerShape{};
}

TEST(TransformerModel, Llama2SevenBHasMetasParameterCount) {
  EXPECT_EQ(TransformerParameters(Parse({{"preset", "llama2-7b"}})), 6738415616.0);
}

TEST(TransformerModel, ModelFlopsByHand) {
  // 1 layer, d 4, 2 heads of 2, ffn 8 (gated), vocab 10, seq 4, batch 1. Per token:
  // MLP 2·4·8·3 = 192, qkv 2·4·(4+2·4) = 96, out 2·4·4 = 32, logits 2·4·10 = 80 -> 400;
  // attention 4·4·4 = 64; x3 for the backward pass; x4 tokens: (400 + 64)·3·4 = 5568.
  const TransformerShape s = Parse({{"layers", 1},
                                    {"dModel", 4},
                                    {"heads", 2},
                                    {"ffn", 8},
                                    {"vocab", 10},
                                    {"seqLen", 4},
                                    {"globalBatch", 1}});
  EXPECT_EQ(s.head_dim, 2);
  EXPECT_EQ(s.kv_heads, 2);
  EXPECT_DOUBLE_EQ(TransformerModelFlops(s), 5568);
  // Parameters: 4·12 + 4·4 + 3·4·8 + 2·4 = 168 in the layer, 2·10·4 + 4 = 84 outside.
  EXPECT_DOUBLE_EQ(TransformerParameters(s), 252);
  const StepProfile p = TransformerProfile(s, Remat::kFull);
  EXPECT_EQ(p.unit, "tokens");
  EXPECT_EQ(p.units_per_step, 4);
  EXPECT_DOUBLE_EQ(p.layer.weights, 168 * 4);    // f32
  EXPECT_DOUBLE_EQ(p.layer.optimizer, 168 * 8);  // Adam's two moments
  EXPECT_DOUBLE_EQ(p.layer.gathered, 168 * 2);   // bf16
  EXPECT_EQ(p.max_tp, 2);
}

TEST(TransformerModel, RematTradesMemoryForRecompute) {
  const TransformerShape s = Parse({{"preset", "llama2-7b"}});
  const StepProfile none = TransformerProfile(s, Remat::kNone);
  const StepProfile minimal = TransformerProfile(s, Remat::kMinimal);
  const StepProfile full = TransformerProfile(s, Remat::kFull);
  EXPECT_GT(none.activation_bytes + none.activation_bytes_tp,
            minimal.activation_bytes + minimal.activation_bytes_tp);
  EXPECT_GT(minimal.activation_bytes + minimal.activation_bytes_tp,
            full.activation_bytes + full.activation_bytes_tp);
  auto mxu = [](const StepProfile& p) {
    double f = 0;
    for (const ProfileOp& op : p.ops) f += op.mxu_flops * op.count * (op.per_layer ? p.layers : 1);
    return f;
  };
  EXPECT_LT(mxu(none), mxu(minimal));
  EXPECT_LT(mxu(minimal), mxu(full));
  EXPECT_EQ(none.model_flops, full.model_flops);  // MFU counts the model, not the recompute
}

TEST(TransformerModel, MixtralHasMistralsParameterCountAndMaxTextsFlops) {
  const TransformerShape s = Parse({{"preset", "mixtral-8x7b"}});
  // Mistral publishes 46.7B parameters for Mixtral-8x7B.
  EXPECT_NEAR(TransformerParameters(s), 46.7e9, 0.05e9);
  // MaxText counts the top-2 experts: the tpu-recipes Mixtral-8x7B v6e-256 log line prints
  // 302.311 TFLOP/s/device at 13.484 s per step for 12 x 4096 tokens per device.
  TransformerShape run = s;
  run.global_batch = 12 * 256;
  EXPECT_NEAR(TransformerModelFlops(run) / 256 / 13.484 / 1e12, 302.311, 0.5);
}

TEST(TransformerModel, TokenDroppingComputesTheCapacity) {
  TransformerShape s = Parse({{"preset", "mixtral-8x7b"}, {"capacityFactor", 1.25}});
  auto expert_flops = [](const StepProfile& p) {
    double f = 0;
    for (const ProfileOp& op : p.ops) {
      if (op.name.rfind("experts_", 0) == 0) f += op.mxu_flops * op.count;
    }
    return f;
  };
  const double dropped = expert_flops(TransformerProfile(s, Remat::kMinimal));
  s.capacity_factor = 0;
  const double dropless = expert_flops(TransformerProfile(s, Remat::kMinimal));
  EXPECT_NEAR(dropped / dropless, 1.25, 1e-9);
  EXPECT_EQ(TransformerProfile(s, Remat::kMinimal).max_ep, 8);
  EXPECT_GT(TransformerProfile(s, Remat::kMinimal).all_to_all_bytes_per_layer, 0);
  EXPECT_EQ(ParseTransformerShape({{"preset", "mixtral-8x7b"}, {"topK", 9}}).status().message(),
            "model.topK must be at most experts (8)");
}

TEST(TransformerModel, OffloadingMovesActivationsToTheHost) {
  const TransformerShape s = Parse({{"preset", "llama3-8b"}});
  const StepProfile device = TransformerProfile(s, Remat::kMinimal);
  const StepProfile host = TransformerProfile(s, *ParseRemat("minimal_offloaded"));
  EXPECT_EQ(device.host_offload_bytes_per_layer_tp, 0);
  EXPECT_GT(host.host_offload_bytes_per_layer_tp, 0);
  EXPECT_LT(host.activation_bytes_tp, device.activation_bytes_tp);
  // Same recompute: offloading keeps what minimal keeps, elsewhere.
  auto mxu = [](const StepProfile& p) {
    double f = 0;
    for (const ProfileOp& op : p.ops) f += op.mxu_flops * op.count;
    return f;
  };
  EXPECT_DOUBLE_EQ(mxu(device), mxu(host));
}

// Seconds of the attention kernels alone of one step of `shape` on one chip of `type`, with the
// softmax's vector work taken out so that the MXUs bound it.
double AttentionMxuSeconds(const TransformerShape& shape, const char* type) {
  Efficiency eff;
  eff.softmax_ops_forward = eff.softmax_ops_backward = 0;
  StepProfile p = TransformerProfile(shape, Remat::kNone, eff);
  std::erase_if(p.ops, [](const ProfileOp& op) { return op.unit != OpUnit::kAttention; });
  for (ProfileOp& op : p.ops) op.hbm_bytes = 0;
  p.layer = p.other = {};
  return EstimatePlan(p, *FindAcceleratorType(type), {Strategy::kDataParallel, 1},
                      PriceTable::Default(), eff)
      .step_seconds;
}

TEST(TransformerModel, AttentionWith128WideHeadsFillsHalfOfV6esArrays) {
  // The same attention FLOPs (heads x headDim = 4096) as 32 heads of 128 and 16 heads of 256.
  TransformerShape narrow = Parse({{"preset", "llama2-7b"}, {"seqLen", 4096}, {"globalBatch", 1}});
  TransformerShape wide = narrow;
  wide.heads = wide.kv_heads = 16;
  wide.head_dim = 256;
  ASSERT_EQ(TransformerModelFlops(narrow), TransformerModelFlops(wide));
  // v6e's 256x256 arrays: a 128-wide head leaves half of every fold idle, so twice the time.
  EXPECT_NEAR(AttentionMxuSeconds(narrow, "v6e-1") / AttentionMxuSeconds(wide, "v6e-1"), 2.0, 0.02);
  // v5e's 128x128 arrays are full either way.
  EXPECT_NEAR(AttentionMxuSeconds(narrow, "v5litepod-1") / AttentionMxuSeconds(wide, "v5litepod-1"),
              1.0, 0.02);
}

TEST(TransformerModel, ErrorsNameTheField) {
  EXPECT_EQ(ParseTransformerShape({{"preset", "gpt5"}}).status().message(),
            "model.preset must be one of llama2-7b, llama2-13b, llama2-70b, llama3-8b, "
            "llama3-70b, mixtral-8x7b, mixtral-8x22b, gemma-2b, gemma-7b");
  EXPECT_EQ(ParseTransformerShape({{"layers", 2}}).status().message(),
            "model.dModel is required (or give a preset)");
  EXPECT_EQ(ParseTransformerShape({{"preset", "llama2-7b"}, {"heads", 0}}).status().message(),
            "model.heads must be an integer in 1..1024");
  EXPECT_EQ(ParseTransformerShape({{"preset", "llama2-7b"}, {"kvHeads", 5}}).status().message(),
            "model.kvHeads must divide heads (32), got 5");
  EXPECT_EQ(ParseTransformerShape({{"preset", "llama2-7b"}, {"depth", 5}}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(
      ParseTransformerShape({{"preset", "llama2-7b"}, {"globalBatch", 1 << 20}, {"seqLen", 16384}})
          .status()
          .message(),
      "model.globalBatch x seqLen must be at most 8589934592 tokens per step");
  EXPECT_EQ(ParseRemat("some").status().message(),
            "unknown remat policy 'some' (expected none, minimal, full, "
            "save_dot_except_mlpwi, save_dot_except_mlp, save_qkv_proj, save_out_proj, "
            "qkv_proj_offloaded, minimal_offloaded, or a custom object)");
}

}  // namespace
}  // namespace tpuemu::engine::cost
