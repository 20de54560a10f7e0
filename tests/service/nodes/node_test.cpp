#include "service/nodes/node.h"

#include <gtest/gtest.h>

namespace tpuemu::service {
namespace {

Node MakeTypedNode(const char* type, NodeState state) {
  Node n;
  n.key = {"p", "us-central2-b", "n1"};
  n.uid = "1234567890123456789";
  n.state = state;
  n.type = *engine::FindAcceleratorType(type);
  n.runtime_version = "tpu-ubuntu2204-base";
  n.create_time = "2026-01-01T00:00:00.000000Z";
  n.seq = 7;
  n.fields = {{"networkConfig", {{"enableExternalIps", true}}}, {"labels", {{"a", "b"}}}};
  return n;
}

TEST(NodeTest, RenderFillsWhatTheRealServerFills) {
  nlohmann::json j = RenderNode(MakeTypedNode("v4-32", NodeState::kReady));
  EXPECT_EQ(j["name"], "projects/p/locations/us-central2-b/nodes/n1");
  EXPECT_EQ(j["apiVersion"], "V2");
  EXPECT_EQ(j["state"], "READY");
  EXPECT_EQ(j["health"], "HEALTHY");
  EXPECT_EQ(j["acceleratorType"], "v4-32");
  EXPECT_EQ(j["acceleratorConfig"]["type"], "V4");
  EXPECT_EQ(j["acceleratorConfig"]["topology"], "2x2x4");
  EXPECT_EQ(j["id"], "1234567890123456789");
  EXPECT_EQ(j["schedulingConfig"], nlohmann::json::object());
  ASSERT_EQ(j["networkEndpoints"].size(), 4u);  // one per worker host
  for (const auto& ep : j["networkEndpoints"]) {
    EXPECT_EQ(ep["port"], 8470);
    EXPECT_TRUE(ep["accessConfig"].contains("externalIp"));
  }
  EXPECT_NE(j["networkEndpoints"][0]["ipAddress"], j["networkEndpoints"][1]["ipAddress"]);
  EXPECT_EQ(j["labels"]["a"], "b");
  EXPECT_TRUE(j["cidrBlock"].get<std::string>().starts_with("10."));
}

TEST(NodeTest, ASandboxedNodesInternalAddressesAreABlockOfItsSubnet) {
  Node n = MakeTypedNode("v4-32", NodeState::kReady);
  const nlohmann::json record = RenderNode(n);
  n.sandbox = {.decided = true, .enabled = true, .network = 9, .subnet = "10.9.0.0/16"};
  const nlohmann::json j = RenderNode(n);
  EXPECT_EQ(WorkerSubnet(n), "10.9.0.0/16");
  EXPECT_EQ(j["cidrBlock"], "10.9.8.0/24");  // block seq + 1 of the /16 (block 0 is skipped)
  for (int w = 0; w < 4; ++w) {
    EXPECT_EQ(j["networkEndpoints"][w]["ipAddress"], "10.9.8." + std::to_string(w + 2));
    EXPECT_EQ(WorkerIpAddress(n, w), "10.9.8." + std::to_string(w + 2));
    // The host reaches it at a loopback address of its own.
    EXPECT_EQ(j["networkEndpoints"][w]["accessConfig"]["externalIp"], WorkerExternalAddress(n, w));
  }
  // A node made before subnets were kept, and a record: 10.0.0.0/8, as always.
  n.sandbox.subnet = "";
  EXPECT_EQ(WorkerSubnet(n), "10.0.0.0/8");
  EXPECT_EQ(RenderNode(n)["networkEndpoints"][0]["ipAddress"],
            record["networkEndpoints"][0]["ipAddress"]);
  EXPECT_EQ(SubnetProblem("10.9.0.0/16"), "");
  EXPECT_NE(SubnetProblem("10.9.0.0/24"), "");  // no room for blocks
  EXPECT_NE(SubnetProblem("10.9.1.0/16"), "");  // host bits set
  EXPECT_NE(SubnetProblem("ten/8"), "");
}

TEST(NodeTest, OperationCopyHasNoHealthAndNotReadyNodesHaveNone) {
  EXPECT_FALSE(RenderNode(MakeTypedNode("v4-8", NodeState::kReady), {.for_operation = true})
                   .contains("health"));
  EXPECT_FALSE(RenderNode(MakeTypedNode("v4-8", NodeState::kCreating)).contains("health"));
}

TEST(NodeTest, CidrBlockHoldsEveryWorker) {
  // v5p-12288 has 1536 workers: the block must be larger than a /24.
  EXPECT_EQ(CidrBlockFor(1, 1536).substr(CidrBlockFor(1, 1536).find('/')), "/21");
  EXPECT_EQ(CidrBlockFor(1, 1).substr(CidrBlockFor(1, 1).find('/')), "/24");
  EXPECT_NE(CidrBlockFor(1, 1), CidrBlockFor(2, 1));
}

TEST(NodeTest, StateNamesRoundTrip) {
  for (NodeState s : {NodeState::kCreating, NodeState::kReady, NodeState::kStopped,
                      NodeState::kStopping, NodeState::kStarting, NodeState::kDeleting}) {
    Result<NodeState> parsed = ParseNodeState(NodeStateName(s));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, s);
  }
  EXPECT_FALSE(ParseNodeState("BOGUS").ok());
}

}  // namespace
}  // namespace tpuemu::service
