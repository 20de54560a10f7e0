#include "service/nodes/quota.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "db/node_repository.h"
#include "tests/db/rows.h"

namespace tpuemu::service {
namespace {

using db::testing::MakeNode;

constexpr char kZone[] = "us-central2-b";
constexpr char kOtherZone[] = "us-central1-a";

engine::AcceleratorType Type(const char* name) { return engine::FindAcceleratorType(name).value(); }

class TensorCoreQuotaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = std::move(db::Store::Open(":memory:").value());
    nodes_ = std::make_unique<db::NodeRepository>(*store_);
  }

  // A node row written straight to the store, behind the quota's back.
  void Store(const std::string& project, const std::string& zone, const std::string& id,
             int64_t tensorcores) {
    ASSERT_TRUE(store_
                    ->Transaction([&](db::Txn& txn) {
                      return nodes_->Insert(txn, MakeNode(project, zone, id, tensorcores)).status();
                    })
                    .ok());
  }

  // CheckProject in a transaction, as a batcher body runs it.
  Status CheckProject(TensorCoreQuota& quota, const std::string& project, const char* type) {
    Status result;
    EXPECT_TRUE(store_
                    ->Transaction([&](db::Txn& txn) {
                      result = quota.CheckProject(txn, project, Type(type));
                      return Status::Ok();
                    })
                    .ok());
    return result;
  }

  std::unique_ptr<db::Store> store_;
  std::unique_ptr<db::NodeRepository> nodes_;
};

TEST_F(TensorCoreQuotaTest, TheTypesUsedHereHoldTheseTensorCores) {
  EXPECT_EQ(Type("v4-8").tensorcores, 8);
  EXPECT_EQ(Type("v4-16").tensorcores, 16);
  EXPECT_EQ(Type("v5litepod-4").tensorcores, 4);
}

TEST_F(TensorCoreQuotaTest, ReseedCountsEachZoneOverAllProjects) {
  Store("p", kZone, "a", 8);
  Store("q", kZone, "b", 4);
  Store("p", kOtherZone, "c", 4);
  TensorCoreQuota quota(*store_, Catalog::Default(), {});
  EXPECT_EQ(quota.ZoneUsed(kZone), 0);  // nothing counted before Reseed
  ASSERT_TRUE(quota.Reseed().ok());
  EXPECT_EQ(quota.ZoneUsed(kZone), 12);  // 8 + 4
  EXPECT_EQ(quota.ZoneUsed(kOtherZone), 4);
  EXPECT_EQ(quota.ZoneUsed("europe-west4-a"), 0);
  quota.AddProject("p", 16);
  quota.AddZone(kZone, 16);
  quota.AddProject("q", -4);
  quota.AddZone(kZone, -4);
  EXPECT_EQ(quota.ZoneUsed(kZone), 24);  // 12 + 16 - 4
  quota.Clear();
  EXPECT_EQ(quota.ZoneUsed(kZone), 0);
}

TEST_F(TensorCoreQuotaTest, ZoneCapacityIsInclusiveAndNamesZoneAndOperation) {
  Store("p", kZone, "a", 12);
  TensorCoreQuota quota(*store_, Catalog::Default(), {.zone_capacity_tensorcores = 32});
  ASSERT_TRUE(quota.Reseed().ok());
  const std::string op = "projects/p/locations/us-central2-b/operations/operation-1-2-3-1a2b3c4d";
  EXPECT_TRUE(quota.CheckZone(kZone, Type("v4-16").tensorcores, op).ok());  // 12 + 16 = 28 <= 32
  quota.AddProject("p", 16);
  quota.AddZone(kZone, 16);
  EXPECT_TRUE(quota.CheckZone(kZone, Type("v5litepod-4").tensorcores, op)
                  .ok());  // 28 + 4 = 32: exactly full
  EXPECT_TRUE(
      quota.CheckZone(kOtherZone, Type("v4-16").tensorcores, op).ok());  // zones count apart
  Status full = quota.CheckZone(kZone, Type("v4-8").tensorcores, op);    // 28 + 8 = 36 > 32
  EXPECT_EQ(full.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(full.message(),
            "There is no more capacity in the zone \"us-central2-b\"; you can try in another zone "
            "where Cloud TPU Nodes are offered (see https://cloud.google.com/tpu/docs/regions) "
            "[EID: 0x1a2b3c4d]");
}

TEST_F(TensorCoreQuotaTest, ProjectQuotaCountsEveryZoneOnceThenKeepsTheCount) {
  Store("p", kZone, "a", 8);
  Store("p", kOtherZone, "b", 4);
  Store("q", kZone, "c", 16);  // another project: not p's
  TensorCoreQuota quota(*store_, Catalog::Default(), {.project_quota_tensorcores = 16});
  ASSERT_TRUE(quota.Reseed().ok());
  EXPECT_TRUE(CheckProject(quota, "p", "v5litepod-4").ok());  // 12 + 4 = 16: at the limit
  Status over = CheckProject(quota, "p", "v4-8");             // 12 + 8 = 20 > 16
  EXPECT_EQ(over.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(over.message(),
            "Quota 'TPU_TENSORCORES_PER_PROJECT' exceeded. Limit: 16 in project p (in use: 12, "
            "requested: 8 for v4-8).");
  // Counted once: a row written behind the quota's back is not seen until the next Reseed ...
  Store("p", kZone, "d", 4);
  EXPECT_TRUE(CheckProject(quota, "p", "v5litepod-4").ok());
  // ... while Add keeps the count: 12 + 4 = 16, so 4 more is 20.
  quota.AddProject("p", 4);
  quota.AddZone(kZone, 4);
  EXPECT_NE(CheckProject(quota, "p", "v5litepod-4").message().find("(in use: 16, requested: 4"),
            std::string::npos);
  quota.AddProject("p", -8);
  quota.AddZone(kZone, -8);  // a v4-8 deleted: 8 in use
  EXPECT_TRUE(CheckProject(quota, "p", "v4-8").ok());
  // Reseed forgets the count: the store now holds 8 + 4 + 4 = 16 for p.
  ASSERT_TRUE(quota.Reseed().ok());
  EXPECT_NE(CheckProject(quota, "p", "v5litepod-4").message().find("(in use: 16, requested: 4"),
            std::string::npos);
  EXPECT_TRUE(CheckProject(quota, "q", "v5litepod-4").code() == StatusCode::kResourceExhausted);
}

TEST_F(TensorCoreQuotaTest, NoProjectQuotaMeansNoLimit) {
  Store("p", kZone, "a", 1000000);
  TensorCoreQuota quota(*store_, Catalog::Default(), {.project_quota_tensorcores = 0});
  EXPECT_TRUE(CheckProject(quota, "p", "v4-16").ok());
}

}  // namespace
}  // namespace tpuemu::service
