#include "service/workers/guest_metadata.h"

#include <gtest/gtest.h>

#include <regex>

namespace tpuemu::service {
namespace {

Node MakeWorkerNode(const std::string& type, bool sandboxed) {
  Node node;
  node.key = {"proj", "us-central2-b", "n1"};
  node.uid = "7340032345678901234";
  node.seq = 3;
  node.state = NodeState::kReady;
  node.type = engine::FindAcceleratorType(type).value();
  node.runtime_version = "tpu-ubuntu2204-base";
  node.sandbox.decided = true;
  node.sandbox.enabled = sandboxed;
  node.fields = {{"metadata", {{"ssh-keys", "u:ssh-rsa AAAA u"}, {"team", "ml"}}}};
  return node;
}

ProjectInfo Project() {
  return {"proj", ProjectNumber("proj"),
          nlohmann::json::array({{{"key", "enable-oslogin"}, {"value", "FALSE"}}})};
}

TEST(GuestMetadataTest, WorkerNamesAndEndpointsAsJaxAndTorchXlaReadThem) {
  Node node = MakeWorkerNode("v4-32", true);
  ASSERT_EQ(node.type.workers, 4);
  EXPECT_TRUE(std::regex_match(WorkerHostname(node, 2), std::regex("t1v-n-[0-9a-f]{8}-w-2")));
  const std::string endpoints = WorkerNetworkEndpoints(node);
  // torch_xla: entry.split(':')[2] for each comma-separated entry, in worker order.
  std::vector<std::string> ips;
  size_t at = 0;
  while (at <= endpoints.size()) {
    size_t comma = endpoints.find(',', at);
    std::string entry =
        endpoints.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    ASSERT_EQ(std::count(entry.begin(), entry.end(), ':'), 2) << entry;
    ips.push_back(entry.substr(entry.rfind(':') + 1));
    at = comma == std::string::npos ? endpoints.size() + 1 : comma + 1;
  }
  ASSERT_EQ(ips.size(), 4u);
  for (int w = 0; w < 4; ++w) {
    EXPECT_EQ(ips[w], WorkerIpAddress(node, w));
    EXPECT_EQ(ips[w].rfind("10.", 0), 0u) << "workers know each other by internal addresses";
    // The host reaches a sandboxed worker at a loopback address of its own.
    EXPECT_EQ(WorkerExternalAddress(node, w).rfind("127.", 0), 0u);
  }
  EXPECT_NE(ips[0], ips[1]);
  EXPECT_NE(WorkerExternalAddress(node, 0), WorkerExternalAddress(node, 1));
  // Without sandboxes the addresses are the same 10.x block, and there is no host address.
  EXPECT_EQ(WorkerIpAddress(MakeWorkerNode("v4-32", false), 0), WorkerIpAddress(node, 0));
  EXPECT_EQ(WorkerExternalAddress(MakeWorkerNode("v4-32", false), 0), "");
}

TEST(GuestMetadataTest, TpuEnvHasTheBoundsAndMatchesTorchXlasRegex) {
  Node node = MakeWorkerNode("v4-32", true);
  std::string env = TpuEnv(node, 3, {});
  EXPECT_NE(env.find("ACCELERATOR_TYPE: 'v4-32'\n"), std::string::npos);
  EXPECT_NE(env.find("CHIPS_PER_HOST_BOUNDS: '2,2,1'\n"), std::string::npos);
  EXPECT_NE(env.find("HOST_BOUNDS: '1,1,4'\n"), std::string::npos);
  EXPECT_NE(env.find("TPU_PROCESS_BOUNDS: '1,1,4'\n"), std::string::npos);
  EXPECT_NE(env.find("WORKER_ID: '3'\n"), std::string::npos);
  EXPECT_NE(env.find("ZONE: 'us-central2-b'\n"), std::string::npos);
  EXPECT_EQ(env.find("MEGASCALE"), std::string::npos);
  // torch_xla/_internal/tpu.py's version regex.
  std::smatch m;
  std::string type = "v4-32";
  ASSERT_TRUE(std::regex_match(type, m, std::regex("^(?:v|tpu)(\\d)([A-Za-z]?){7}-(\\d+)$")));
  EXPECT_EQ(m[1], "4");

  GuestContext multislice;
  multislice.slice = SliceInfo{1, 2, "127.0.1.2:8080"};
  std::string ms = TpuEnv(node, 0, multislice);
  EXPECT_NE(ms.find("MEGASCALE_SLICE_ID: '1'\n"), std::string::npos);
  EXPECT_NE(ms.find("MEGASCALE_NUM_SLICES: '2'\n"), std::string::npos);
  EXPECT_NE(ms.find("MEGASCALE_COORDINATOR_ADDRESS: '127.0.1.2:8080'\n"), std::string::npos);
  // v5e-8: one host of 2x4 chips.
  std::string v5e = TpuEnv(MakeWorkerNode("v5litepod-8", true), 0, {});
  EXPECT_NE(v5e.find("CHIPS_PER_HOST_BOUNDS: '2,4,1'\n"), std::string::npos);
  EXPECT_NE(v5e.find("HOST_BOUNDS: '1,1,1'\n"), std::string::npos);
}

TEST(GuestMetadataTest, TreeFollowsTheNode) {
  Node node = MakeWorkerNode("v4-32", true);
  GuestContext context{"http://127.0.0.1:8470", std::nullopt};
  nlohmann::json tree = GuestMetadataTree(node, 1, Project(), context);
  const auto& attrs = tree["instance"]["attributes"];
  EXPECT_EQ(attrs["agent-worker-number"], "1");
  EXPECT_EQ(attrs["accelerator-type"], "v4-32");
  EXPECT_EQ(attrs["team"], "ml");
  EXPECT_EQ(attrs["ssh-keys"], "u:ssh-rsa AAAA u");
  EXPECT_EQ(attrs["tpuemu-api-endpoint"], "http://127.0.0.1:8470");
  EXPECT_EQ(tree["instance"]["name"], WorkerHostname(node, 1));
  EXPECT_EQ(tree["instance"]["zone"], "projects/" + ProjectNumber("proj") + "/zones/us-central2-b");
  EXPECT_EQ(tree["instance"]["network-interfaces"]["0"]["ip"], WorkerIpAddress(node, 1));
  EXPECT_EQ(tree["instance"]["preempted"], "FALSE");
  EXPECT_EQ(tree["instance"]["maintenance-event"], "NONE");
  EXPECT_EQ(tree["project"]["project-id"], "proj");
  EXPECT_EQ(tree["project"]["numeric-project-id"], ProjectNumber("proj"));
  EXPECT_EQ(tree["project"]["attributes"]["enable-oslogin"], "FALSE");
  EXPECT_EQ(ProjectNumber("proj").size(), 12u);

  node.state = NodeState::kPreempted;
  node.maintenance = {{"kind", "maintenance"}};
  tree = GuestMetadataTree(node, 1, Project(), context);
  EXPECT_EQ(tree["instance"]["preempted"], "TRUE");
  EXPECT_EQ(tree["instance"]["maintenance-event"], "TERMINATE_ON_HOST_MAINTENANCE");
}

TEST(GuestMetadataTest, LoginEnvironment) {
  Node node = MakeWorkerNode("v4-32", true);
  auto env = WorkerEnvironment(node, 2, {"http://127.0.0.1:8470", std::nullopt});
  std::map<std::string, std::string> m(env.begin(), env.end());
  EXPECT_EQ(m["TPU_WORKER_ID"], "2");
  EXPECT_EQ(m["TPU_ACCELERATOR_TYPE"], "v4-32");
  EXPECT_EQ(m["GCE_METADATA_HOST"], "169.254.169.254");
  EXPECT_EQ(m["GCE_METADATA_IP"], "169.254.169.254");
  EXPECT_EQ(std::count(m["TPU_WORKER_HOSTNAMES"].begin(), m["TPU_WORKER_HOSTNAMES"].end(), ','), 3);
  EXPECT_EQ(m["TPUEMU_ENDPOINT"], "http://127.0.0.1:8470");
}

}  // namespace
}  // namespace tpuemu::service
