#include "service/queued_resources/qr_plan.h"

#include <gtest/gtest.h>

#include <memory>

#include "service/catalog/catalog.h"
#include "service/common/scheduler.h"

namespace tpuemu::service {
namespace {

class QrPlanTest : public ::testing::Test {
 protected:
  ~QrPlanTest() override { scheduler_.Stop(); }

  static QrNodeRequest One(const std::string& node_id, const char* type = "v4-8") {
    QrNodeRequest r;
    r.node_id = node_id;
    r.node.accelerator_type = type;
    r.node.runtime_version = "tpu-ubuntu2204-base";
    return r;
  }
  static QrNodeRequest Multislice(int count, const std::string& prefix = "") {
    QrNodeRequest r = One("");
    r.node_count = count;
    r.node_id_prefix = prefix;
    return r;
  }
  static QueuedResourceSpec Spec(std::vector<QrNodeRequest> requests,
                                 QrTier tier = QrTier::kOnDemand) {
    QueuedResourceSpec spec;
    spec.node_specs = std::move(requests);
    spec.tier = tier;
    return spec;
  }
  Result<QueuedResource> Plan(const QueuedResourceSpec& spec, const std::string& id = "qr") {
    return PlanQueuedResource({"proj", "us-central2-b", id}, spec, nodes_);
  }
  static void ExpectInvalid(const Result<QueuedResource>& plan, const std::string& field) {
    ASSERT_FALSE(plan.ok());
    EXPECT_EQ(plan.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(plan.status().message().find(field), std::string::npos) << plan.status().message();
  }

  std::unique_ptr<db::Store> store_ = std::move(db::Store::Open(":memory:").value());
  Scheduler scheduler_;
  WritePath writes_{*store_, Catalog::Default(), {}};
  NodeManager nodes_{*store_, writes_, scheduler_, Catalog::Default(), {}};
};

TEST_F(QrPlanTest, OneNodeSpecPlansThatNodeWithItsTypeAndCores) {
  Result<QueuedResource> plan = Plan(Spec({One("n1")}));
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  ASSERT_EQ(plan->nodes.size(), 1u);
  EXPECT_EQ(plan->nodes[0].node_id, "n1");
  EXPECT_FALSE(plan->nodes[0].multislice);
  EXPECT_EQ(plan->type.name, "v4-8");
  EXPECT_EQ(plan->tensorcores, 8);  // v4-8: 4 chips of 2 TensorCores
  EXPECT_EQ(plan->chips, 4);
  EXPECT_EQ(plan->node_specs[0].parent, "projects/proj/locations/us-central2-b");
  EXPECT_EQ(plan->node_specs[0].node_json["acceleratorConfig"]["type"], "V4");
  EXPECT_EQ(plan->NodeName(0), "projects/proj/locations/us-central2-b/nodes/n1");
}

TEST_F(QrPlanTest, MultisliceExpandsToPrefixedNodesDefaultingToTheQueuedResourceId) {
  Result<QueuedResource> plan = Plan(Spec({Multislice(3, "slice")}));
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  ASSERT_EQ(plan->nodes.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(plan->nodes[i].node_id, "slice-" + std::to_string(i));
    EXPECT_TRUE(plan->nodes[i].multislice);
  }
  EXPECT_EQ(plan->tensorcores, 24);
  Result<QueuedResource> dflt = Plan(Spec({Multislice(2)}), "my-qr");
  ASSERT_TRUE(dflt.ok()) << dflt.status().message();
  EXPECT_EQ(dflt->nodes[1].node_id, "my-qr-1");
}

TEST_F(QrPlanTest, TiersWriteTheNodesScheduling) {
  Result<QueuedResource> spot = Plan(Spec({One("s")}, QrTier::kSpot));
  ASSERT_TRUE(spot.ok());
  EXPECT_EQ(spot->node_specs[0].node.fields["schedulingConfig"]["spot"], true);
  Result<QueuedResource> best = Plan(Spec({One("b")}, QrTier::kBestEffort));
  ASSERT_TRUE(best.ok());
  EXPECT_EQ(best->node_specs[0].node.fields["schedulingConfig"]["preemptible"], true);
  QueuedResourceSpec reserved = Spec({One("r")}, QrTier::kGuaranteed);
  reserved.reservation_name = "projects/proj/locations/us-central2-b/reservations/-";
  Result<QueuedResource> res = Plan(reserved);
  ASSERT_TRUE(res.ok());
  EXPECT_EQ(res->node_specs[0].node.fields["schedulingConfig"]["reserved"], true);
  EXPECT_FALSE(res->node_specs[0].node.fields["schedulingConfig"].contains("spot"));
}

TEST_F(QrPlanTest, BadRequestsNameTheField) {
  ExpectInvalid(Plan(Spec({One("n")}), "bad id!"), "queuedResourceId");
  ExpectInvalid(Plan(Spec({})), "tpu.nodeSpec");
  QrNodeRequest both = Multislice(2);
  both.node_id = "x";
  ExpectInvalid(Plan(Spec({both})), "tpu.nodeSpec[0].nodeId");
  ExpectInvalid(Plan(Spec({One("")})), "tpu.nodeSpec[0].multisliceParams");
  ExpectInvalid(Plan(Spec({Multislice(1)})), "tpu.nodeSpec[0].multisliceParams.nodeCount");
  QrNodeRequest elsewhere = One("n");
  elsewhere.parent = "projects/proj/locations/us-central1-a";
  ExpectInvalid(Plan(Spec({elsewhere})), "tpu.nodeSpec[0].parent");
  ExpectInvalid(Plan(Spec({Multislice(2, "Upper")})), "nodeIdPrefix");
  ExpectInvalid(Plan(Spec({One("twice"), One("twice")})), "requested twice");
  ExpectInvalid(Plan(Spec({One("n"), One("m", "v9-8")})), "tpu.nodeSpec[1].node");
}

}  // namespace
}  // namespace tpuemu::service
