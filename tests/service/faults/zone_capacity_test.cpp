#include "service/faults/zone_capacity.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

namespace tpuemu::service {
namespace {

constexpr char kCapacityZone[] = "us-central2-b";

class ZoneCapacityTest : public ::testing::Test {
 protected:
  ZoneCapacity Make(TensorCoreQuota& quota) {
    return ZoneCapacity(
        *store_, quota, Catalog::Default(),
        [this](const std::string& zone) { changed_.push_back(zone); },
        [this](const FaultEvent& e) { events_.push_back(e); });
  }

  std::unique_ptr<db::Store> store_ = std::move(db::Store::Open(":memory:").value());
  TensorCoreQuota quota_{*store_, Catalog::Default(), {.zone_capacity_tensorcores = 512}};
  std::vector<std::string> changed_;
  std::vector<FaultEvent> events_;
};

TEST_F(ZoneCapacityTest, SetOverridesTheZoneReportsItAndClearGoesBack) {
  ZoneCapacity capacity = Make(quota_);
  EXPECT_EQ((*capacity.Get(kCapacityZone))["capacityTensorcores"], 512);
  Result<nlohmann::json> set = capacity.Set(kCapacityZone, 8);
  ASSERT_TRUE(set.ok()) << set.status().message();
  EXPECT_EQ((*set)["capacityTensorcores"], 8);
  EXPECT_EQ((*set)["usedTensorcores"], 0);
  EXPECT_EQ(quota_.ZoneCapacity(kCapacityZone), 8);
  ASSERT_EQ(changed_, std::vector<std::string>{kCapacityZone});
  ASSERT_EQ(events_.size(), 1u);
  EXPECT_EQ(events_[0].kind, "CAPACITY");
  EXPECT_EQ(events_[0].project, "*");
  EXPECT_NE(events_[0].message.find("8 TensorCores"), std::string::npos) << events_[0].message;

  ASSERT_TRUE(capacity.Clear(kCapacityZone).ok());
  EXPECT_EQ(quota_.ZoneCapacity(kCapacityZone), 512);
  EXPECT_EQ(changed_.size(), 2u);
  EXPECT_EQ(events_.size(), 2u);
}

TEST_F(ZoneCapacityTest, OverridesAreStoredAndLoadedAgain) {
  ZoneCapacity capacity = Make(quota_);
  ASSERT_TRUE(capacity.Set(kCapacityZone, 0).ok());
  TensorCoreQuota fresh(*store_, Catalog::Default(), {.zone_capacity_tensorcores = 512});
  ZoneCapacity reloaded = Make(fresh);
  EXPECT_EQ(fresh.ZoneCapacity(kCapacityZone), 512);
  ASSERT_TRUE(reloaded.Load().ok());
  EXPECT_EQ(fresh.ZoneCapacity(kCapacityZone), 0);
  EXPECT_EQ((*reloaded.Get(kCapacityZone))["capacityTensorcores"], 0);
}

TEST_F(ZoneCapacityTest, UnknownZonesAndNegativeCapacitiesAreRefused) {
  ZoneCapacity capacity = Make(quota_);
  EXPECT_EQ(capacity.Set("mars-1", 8).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(capacity.Get("mars-1").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(capacity.Clear("mars-1").status().code(), StatusCode::kNotFound);
  Result<nlohmann::json> negative = capacity.Set(kCapacityZone, -1);
  EXPECT_EQ(negative.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(negative.status().message().find("tensorcores"), std::string::npos);
  EXPECT_TRUE(changed_.empty());
  EXPECT_TRUE(events_.empty());
}

TEST_F(ZoneCapacityTest, ListHasEveryZoneOfTheCatalog) {
  ZoneCapacity capacity = Make(quota_);
  nlohmann::json zones = capacity.List()["zones"];
  EXPECT_EQ(zones.size(), Catalog::Default().zones().size());
  bool found = false;
  for (const nlohmann::json& z : zones) found = found || z["zone"] == kCapacityZone;
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace tpuemu::service
