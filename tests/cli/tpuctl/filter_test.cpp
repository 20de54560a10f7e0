// cli/filter: the gcloud --filter subset (=, !=, :, ~, AND/OR/NOT, parentheses, quoting).
#include "cli/tpuctl/filter.h"

#include <gtest/gtest.h>

namespace tpuemu::cli {
namespace {

using nlohmann::json;

const json kFilterNode = json::parse(R"({
  "name": "projects/p/locations/us-central2-b/nodes/my-tpu",
  "acceleratorType": "v4-8", "acceleratorConfig": {"type": "V4"},
  "state": "READY", "labels": {"env": "dev", "team": "ml"}, "tags": ["web", "gpu-free"],
  "description": "trained model", "health": ""})");

bool Match(const std::string& filter) {
  Result<Filter> f = Filter::Parse(filter);
  EXPECT_TRUE(f.ok()) << filter << ": " << f.status().ToString();
  return f.ok() && f->Matches(kFilterNode);
}

TEST(FilterTest, EmptyMatchesEverything) {
  EXPECT_TRUE(Match(""));
  EXPECT_TRUE(Match("   "));
}

TEST(FilterTest, Equality) {
  EXPECT_TRUE(Match("state=READY"));
  EXPECT_TRUE(Match("state=ready"));  // case-insensitive
  EXPECT_FALSE(Match("state=STOPPED"));
  EXPECT_TRUE(Match("labels.env=dev"));
  EXPECT_FALSE(Match("labels.env=prod"));
  EXPECT_TRUE(Match("acceleratorConfig.type=V4"));
  EXPECT_TRUE(Match("name=my-tpu"));  // the last segment of a resource path
  EXPECT_TRUE(Match("name=projects/p/locations/us-central2-b/nodes/my-tpu"));
  EXPECT_FALSE(Match("name=tpu"));
  EXPECT_TRUE(Match("acceleratorType=v4*"));  // prefix
  EXPECT_TRUE(Match("tags=web"));             // any element of a list
  EXPECT_FALSE(Match("labels.missing=x"));
  EXPECT_TRUE(Match("state = READY"));
  EXPECT_TRUE(Match("description=\"trained model\""));
  EXPECT_TRUE(Match("description='trained model'"));
}

TEST(FilterTest, NotEqual) {
  EXPECT_TRUE(Match("state!=STOPPED"));
  EXPECT_FALSE(Match("state!=READY"));
  EXPECT_TRUE(Match("labels.missing!=x"));
}

TEST(FilterTest, Has) {
  EXPECT_TRUE(Match("name:my-tpu"));
  EXPECT_TRUE(Match("name:MY-TPU"));
  EXPECT_TRUE(Match("labels:env"));  // map has key
  EXPECT_FALSE(Match("labels:owner"));
  EXPECT_TRUE(Match("tags:gpu"));
  EXPECT_TRUE(Match("labels.team:*"));
  EXPECT_FALSE(Match("health:*"));  // empty
  EXPECT_FALSE(Match("labels.owner:*"));
}

TEST(FilterTest, Regex) {
  EXPECT_TRUE(Match("acceleratorType~^v[45]-"));
  EXPECT_FALSE(Match("acceleratorType~^v5"));
}

TEST(FilterTest, BooleanOperators) {
  EXPECT_TRUE(Match("state=READY AND labels.env=dev"));
  EXPECT_TRUE(Match("state=READY labels.env=dev"));  // implicit AND
  EXPECT_FALSE(Match("state=READY AND labels.env=prod"));
  EXPECT_TRUE(Match("state=STOPPED OR labels.env=dev"));
  EXPECT_FALSE(Match("state=STOPPED OR labels.env=prod"));
  EXPECT_TRUE(Match("NOT state=STOPPED"));
  EXPECT_TRUE(Match("-state=STOPPED"));
  EXPECT_FALSE(Match("NOT (state=READY AND labels.env=dev)"));
  // AND binds tighter than OR.
  EXPECT_TRUE(Match("state=STOPPED AND labels.env=prod OR labels.team=ml"));
  EXPECT_FALSE(Match("state=STOPPED AND (labels.env=prod OR labels.team=ml)"));
}

TEST(FilterTest, BadSyntaxIsInvalidArgumentWithPosition) {
  for (const char* bad : {"state", "=READY", "state=", "(state=READY", "state<3", "a=\"open",
                          "state=READY)", "a~("}) {
    Result<Filter> f = Filter::Parse(bad);
    EXPECT_FALSE(f.ok()) << bad;
    if (!f.ok()) {
      EXPECT_EQ(f.status().code(), StatusCode::kInvalidArgument);
      EXPECT_NE(f.status().message().find("--filter"), std::string::npos) << bad;
    }
  }
}

}  // namespace
}  // namespace tpuemu::cli
