// The tpuctl binary against a live tpuemud: queued-resources create (single node and
// --node-count), list with gcloud's columns, describe, delete (refused without --force while its
// nodes live), reset; operations list/describe; tpu-vm simulate-maintenance-event.
#include "tests/cli/tpuctl/tpuctl_fixture.h"

namespace tpuemu::testing {
namespace {

using nlohmann::json;

class TpuctlQueuedResourcesTest : public TpuctlTest {
 protected:
  void SetUp() override { ASSERT_TRUE(StartDaemon({"--maintenance-duration-ms", "100"})); }

  static std::vector<std::string> Qr(std::vector<std::string> args) {
    args.insert(args.begin(), {"compute", "tpus", "queued-resources"});
    args.insert(args.end(), {"--zone", kZone});
    return args;
  }
  std::string StateOf(const std::string& id) {
    return TpuctlJson(Qr({"describe", id, "--format", "json"}))["state"].value("state", "");
  }
};

TEST_F(TpuctlQueuedResourcesTest, CreateListDescribeDeleteAndReset) {
  ProcessResult one = Tpuctl(Qr({"create", "qr1", "--node-id", "n1", "--accelerator-type", "v4-8",
                                 "--runtime-version", "tpu-ubuntu2204-base"}));
  ASSERT_EQ(one.exit_code, 0) << Describe(one);
  ProcessResult multi =
      Tpuctl(Qr({"create", "qr2", "--node-count", "2", "--node-prefix", "ms", "--accelerator-type",
                 "v4-8", "--runtime-version", "tpu-ubuntu2204-base", "--spot"}));
  ASSERT_EQ(multi.exit_code, 0) << Describe(multi);
  ASSERT_TRUE(WaitFor([&] { return StateOf("qr1") == "ACTIVE" && StateOf("qr2") == "ACTIVE"; }));

  ProcessResult list = Tpuctl(Qr({"list"}));
  ASSERT_EQ(list.exit_code, 0) << Describe(list);
  EXPECT_NE(
      list.out.find("NAME  ZONE           NODE_COUNT  ACCELERATOR_TYPE  TYPE  TOPOLOGY  STATE"),
      std::string::npos)
      << list.out;
  json qr2 = TpuctlJson(Qr({"describe", "qr2", "--format", "json"}));
  EXPECT_EQ(qr2["tpu"]["nodeSpec"][0]["multisliceParams"]["nodeCount"], 2);
  EXPECT_TRUE(qr2.contains("spot"));

  ProcessResult refused = Tpuctl(Qr({"delete", "qr2"}));
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.err.find("force"), std::string::npos) << Describe(refused);
  ProcessResult forced = Tpuctl(Qr({"delete", "qr2", "--force"}));
  ASSERT_EQ(forced.exit_code, 0) << Describe(forced);

  ASSERT_EQ(Tpuctl({"compute", "tpus", "tpu-vm", "delete", "n1", "--zone", kZone}).exit_code, 0);
  ASSERT_TRUE(WaitFor([&] { return StateOf("qr1") == "SUSPENDED"; }));
  ProcessResult reset = Tpuctl(Qr({"reset", "qr1"}));
  ASSERT_EQ(reset.exit_code, 0) << Describe(reset);
  EXPECT_TRUE(WaitFor([&] { return StateOf("qr1") == "ACTIVE"; }));

  json ops =
      TpuctlJson({"compute", "tpus", "operations", "list", "--zone", kZone, "--format", "json"});
  ASSERT_FALSE(ops.empty());
  const std::string op_id =
      ops[0]["name"].get<std::string>().substr(ops[0]["name"].get<std::string>().rfind('/') + 1);
  json op = TpuctlJson(
      {"compute", "tpus", "operations", "describe", op_id, "--zone", kZone, "--format", "json"});
  EXPECT_EQ(op["name"], ops[0]["name"]);
}

TEST_F(TpuctlQueuedResourcesTest, SimulateMaintenanceEvent) {
  ASSERT_EQ(CreateNode("m1").exit_code, 0);
  ProcessResult sim = Tpuctl({"compute", "tpus", "tpu-vm", "simulate-maintenance-event", "m1",
                              "--zone", kZone, "--workers", "0"});
  ASSERT_EQ(sim.exit_code, 0) << Describe(sim);
  json node = TpuctlJson(
      {"compute", "tpus", "tpu-vm", "describe", "m1", "--zone", kZone, "--format", "json"});
  EXPECT_EQ(node["health"], "HEALTHY");  // the command waited for the event's end
}

}  // namespace
}  // namespace tpuemu::testing
