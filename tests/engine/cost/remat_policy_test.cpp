#include "engine/cost/remat_policy.h"

#include <gtest/gtest.h>

namespace tpuemu::engine::cost {
namespace {

TEST(RematPolicy, NamedPoliciesPlaceTheTensorsMaxTextSaves) {
  const Remat except_mlpwi = *ParseRemat("save_dot_except_mlpwi");
  EXPECT_EQ(except_mlpwi.mlp_in, Placement::kRecompute);
  EXPECT_EQ(except_mlpwi.mlp_out, Placement::kDevice);
  EXPECT_FALSE(except_mlpwi.Offloads());
  const Remat qkv = *ParseRemat("qkv_proj_offloaded");
  EXPECT_EQ(qkv.query, Placement::kOffload);
  EXPECT_EQ(qkv.out_proj, Placement::kRecompute);
  EXPECT_TRUE(qkv.Offloads());
  EXPECT_EQ(*ParseRemat("full"), Remat::kFull);
  EXPECT_TRUE(ParseRemat("none")->keep_everything);
}

TEST(RematPolicy, CustomObjectRoundTripsAndNamesBadFields) {
  const nlohmann::json custom = {{"decoderLayerInput", "offload"},
                                 {"queryProj", "offload"},
                                 {"keyProj", "offload"},
                                 {"valueProj", "offload"},
                                 {"outProj", "device"},
                                 {"mlpwi", "remat"},
                                 {"mlpwo", "remat"}};
  Result<Remat> r = ParseRematJson(custom);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(RematName(*r), "custom");
  EXPECT_EQ(r->layer_input, Placement::kOffload);
  EXPECT_EQ(r->out_proj, Placement::kDevice);
  EXPECT_EQ(RematToJson(*r), custom);
  EXPECT_EQ(RematToJson(Remat::kMinimal), "minimal");
  EXPECT_EQ(ParseRematJson({{"mlpwi", "host"}}).status().message(),
            "remat.mlpwi must be \"device\", \"offload\" or \"remat\"");
  EXPECT_EQ(ParseRematJson({{"decoderLayerInput", "remat"}}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseRematJson({{"context", "device"}}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseRematJson(3).status().code(), StatusCode::kInvalidArgument);
}

TEST(RematPolicy, AutoTriesOffloadingButNotNone) {
  bool offloads = false;
  for (const Remat& r : AutoRemats()) {
    EXPECT_FALSE(r.keep_everything);
    offloads = offloads || r.Offloads();
  }
  EXPECT_TRUE(offloads);
}

}  // namespace
}  // namespace tpuemu::engine::cost
