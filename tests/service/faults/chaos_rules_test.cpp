#include "service/faults/chaos_rules.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <vector>

namespace tpuemu::service {
namespace {

using nlohmann::json;

class ChaosRulesTest : public ::testing::Test {
 protected:
  static void ExpectInvalid(const Result<json>& added, const std::string& field) {
    ASSERT_FALSE(added.ok());
    EXPECT_EQ(added.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(added.status().message().find(field), std::string::npos) << added.status().message();
  }
  // How many of `n` POSTs to `path` the rules fail.
  int Fired(ChaosRules& rules, int n, const std::string& path = "/v2/p/nodes") {
    int fired = 0;
    for (int i = 0; i < n; ++i) fired += rules.Match("POST", path).has_value() ? 1 : 0;
    return fired;
  }

  std::unique_ptr<db::Store> store_ = std::move(db::Store::Open(":memory:").value());
  ChaosRules rules_{*store_, /*seed=*/7};
};

TEST_F(ChaosRulesTest, AMatchingRuleFailsTheCallWithItsCode) {
  Result<json> added =
      rules_.Add({{"method", "post"}, {"path", "/nodes$"}, {"error", {{"code", 503}}}});
  ASSERT_TRUE(added.ok()) << added.status().message();
  EXPECT_EQ((*added)["id"], "rule-1");
  EXPECT_EQ((*added)["method"], "POST");
  EXPECT_EQ((*added)["error"]["status"], "UNAVAILABLE");
  std::optional<ChaosEffect> effect = rules_.Match("POST", "/v2/projects/p/locations/z/nodes");
  ASSERT_TRUE(effect.has_value());
  EXPECT_EQ(effect->rule_id, "rule-1");
  EXPECT_FALSE(effect->operation_error);
  EXPECT_EQ(effect->status.code(), StatusCode::kUnavailable);
  EXPECT_NE(effect->status.message().find("rule-1"), std::string::npos);
  // Another method, or a path the pattern does not match: untouched.
  EXPECT_FALSE(rules_.Match("GET", "/v2/projects/p/locations/z/nodes").has_value());
  EXPECT_FALSE(rules_.Match("POST", "/v2/projects/p/locations/z/nodes/n:start").has_value());
  EXPECT_EQ(rules_.List()["rules"][0]["hits"], 1);
}

TEST_F(ChaosRulesTest, CodesAreNamesGrpcNumbersOrHttpStatuses) {
  for (const json& code : {json("RESOURCE_EXHAUSTED"), json(8), json(429)}) {
    std::unique_ptr<db::Store> store = std::move(db::Store::Open(":memory:").value());
    ChaosRules rules(*store, 1);
    ASSERT_TRUE(rules.Add({{"error", {{"code", code}}}}).ok()) << code.dump();
    EXPECT_EQ(rules.Match("GET", "/v2/x")->status.code(), StatusCode::kResourceExhausted)
        << code.dump();
  }
}

TEST_F(ChaosRulesTest, AnOperationErrorOfCode8CarriesTheStockoutText) {
  ASSERT_TRUE(rules_.Add({{"operationError", {{"code", 8}}}}).ok());
  std::optional<ChaosEffect> effect = rules_.Match("POST", "/v2/projects/p/locations/zz-1/nodes");
  ASSERT_TRUE(effect.has_value());
  EXPECT_TRUE(effect->operation_error);
  EXPECT_NE(effect->status.message().find("There is no more capacity in the zone \"zz-1\""),
            std::string::npos)
      << effect->status.message();
}

TEST_F(ChaosRulesTest, MaxHitsStopsARuleAndTheNextOneMatches) {
  ASSERT_TRUE(
      rules_.Add({{"id", "twice"}, {"maxHits", 2}, {"error", {{"code", "UNAVAILABLE"}}}}).ok());
  ASSERT_TRUE(rules_.Add({{"id", "then"}, {"error", {{"code", "INTERNAL"}}}}).ok());
  EXPECT_EQ(rules_.Match("GET", "/a")->rule_id, "twice");
  EXPECT_EQ(rules_.Match("GET", "/a")->rule_id, "twice");
  EXPECT_EQ(rules_.Match("GET", "/a")->rule_id, "then");
  EXPECT_EQ(rules_.Add({{"id", "then"}, {"error", {{"code", 500}}}}).status().code(),
            StatusCode::kAlreadyExists);
}

TEST_F(ChaosRulesTest, TheSameSeedFiresOnTheSameCalls) {
  const json rule = {{"probability", 0.5}, {"error", {{"code", 503}}}};
  ChaosRules a(*store_, 11);
  ASSERT_TRUE(a.Add(rule).ok());
  std::unique_ptr<db::Store> other = std::move(db::Store::Open(":memory:").value());
  ChaosRules b(*other, 11);
  ASSERT_TRUE(b.Add(rule).ok());
  std::vector<bool> fired_a, fired_b;
  for (int i = 0; i < 64; ++i) {
    fired_a.push_back(a.Match("GET", "/x").has_value());
    fired_b.push_back(b.Match("GET", "/x").has_value());
  }
  EXPECT_EQ(fired_a, fired_b);
  const int hits = static_cast<int>(std::count(fired_a.begin(), fired_a.end(), true));
  EXPECT_GT(hits, 10);  // p = 0.5 of 64: about 32, never this far off with a fixed seed
  EXPECT_LT(hits, 54);
}

TEST_F(ChaosRulesTest, ProbabilityZeroNeverFires) {
  ASSERT_TRUE(rules_.Add({{"probability", 0}, {"error", {{"code", 503}}}}).ok());
  EXPECT_EQ(Fired(rules_, 100), 0);
}

TEST_F(ChaosRulesTest, RulesAreStoredListedAndDeleted) {
  ASSERT_TRUE(rules_.Add({{"id", "keep"}, {"path", "/nodes"}, {"error", {{"code", 503}}}}).ok());
  ChaosRules reloaded(*store_, 7);
  ASSERT_TRUE(reloaded.Load().ok());
  ASSERT_EQ(reloaded.List()["rules"].size(), 1u);
  EXPECT_EQ(reloaded.List()["rules"][0]["id"], "keep");
  EXPECT_EQ(Fired(reloaded, 3), 3);
  ASSERT_TRUE(reloaded.Delete("keep").ok());
  EXPECT_EQ(Fired(reloaded, 3), 0);
  Status missing = reloaded.Delete("keep");
  EXPECT_EQ(missing.code(), StatusCode::kNotFound);
  EXPECT_NE(missing.message().find("chaosRules/keep"), std::string::npos);
  rules_.Clear();
  EXPECT_TRUE(rules_.List()["rules"].empty());
}

TEST_F(ChaosRulesTest, BadRulesNameTheField) {
  ExpectInvalid(rules_.Add(json::object()), "exactly one of 'error'");
  ExpectInvalid(rules_.Add({{"error", {{"code", 1}}}, {"operationError", {{"code", 8}}}}),
                "exactly one of 'error'");
  ExpectInvalid(rules_.Add({{"error", json::object()}}), "error.code");
  ExpectInvalid(rules_.Add({{"error", {{"code", "SOMETIMES"}}}}), "error.code");
  ExpectInvalid(rules_.Add({{"error", {{"code", 200}}}}), "error.code");
  ExpectInvalid(rules_.Add({{"probability", 1.5}, {"error", {{"code", 503}}}}), "probability");
  ExpectInvalid(rules_.Add({{"maxHits", -1}, {"error", {{"code", 503}}}}), "maxHits");
  ExpectInvalid(rules_.Add({{"path", "("}, {"error", {{"code", 503}}}}), "path");
  ExpectInvalid(rules_.Add({{"method", 5}, {"error", {{"code", 503}}}}), "method");
  ExpectInvalid(rules_.Add({{"id", ""}, {"error", {{"code", 503}}}}), "id");
  EXPECT_TRUE(rules_.List()["rules"].empty());
}

}  // namespace
}  // namespace tpuemu::service
