#include "service/common/validation.h"

#include <gtest/gtest.h>

namespace tpuemu::service {
namespace {

TEST(ValidationTest, NodeIdFollowsTheGceNameRule) {
  EXPECT_TRUE(ValidateNodeId("a").ok());
  EXPECT_TRUE(ValidateNodeId("my-tpu-01").ok());
  EXPECT_TRUE(ValidateNodeId(std::string(63, 'a')).ok());
  for (const char* bad : {"", "1abc", "Abc", "abc-", "a_b", "a.b", "a b"}) {
    Status s = ValidateNodeId(bad);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(s.message().find("nodeId"), std::string::npos);
  }
  EXPECT_FALSE(ValidateNodeId(std::string(64, 'a')).ok());
}

TEST(ValidationTest, LabelsFollowResourceManagerRules) {
  EXPECT_TRUE(ValidateLabels({{"env", "prod"}, {"team_1", ""}, {"k-2", "v_9-x"}}).ok());
  Status dot = ValidateLabels({{"test-name", "pt-r1.9"}});
  EXPECT_EQ(dot.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(dot.message().find("invalid character '.' at index 5"), std::string::npos)
      << dot.message();
  EXPECT_FALSE(ValidateLabels({{"Env", "x"}}).ok());
  EXPECT_FALSE(ValidateLabels({{"1env", "x"}}).ok());
  EXPECT_FALSE(ValidateLabels({{"env", "X"}}).ok());
  EXPECT_FALSE(ValidateLabels({{"env", 5}}).ok());
  EXPECT_FALSE(ValidateLabels({{std::string(64, 'k'), "x"}}).ok());
  nlohmann::json many = nlohmann::json::object();
  for (int i = 0; i < 65; ++i) many["k" + std::to_string(i)] = "v";
  EXPECT_FALSE(ValidateLabels(many).ok());
}

TEST(ValidationTest, DescriptionAtMost512Characters) {
  EXPECT_TRUE(ValidateDescription(std::string(512, 'x')).ok());
  EXPECT_EQ(ValidateDescription(std::string(513, 'x')).code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tpuemu::service
