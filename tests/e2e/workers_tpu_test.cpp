// What a TPU VM worker shows of its host's chips, through the public surface: a real tpuemud with
// sandboxes, a node created over HTTP, and commands run over SSH as a user would — torch_xla's
// chip count, Ray's, `ls /dev/accel*`, and tpu-info (docs/workers.md, "What is real and what is a
// stand-in").
#include <gtest/gtest.h>

#include <string>

#include "tests/e2e/workers_fixture.h"

namespace tpuemu::testing {
namespace {

using std::chrono::seconds;

// torch_xla/_internal/tpu.py's num_available_chips(), as published.
constexpr const char* kTorchXlaChips =
    "python3 -c \"\nimport glob, os, pathlib\nn = 0\n"
    "for v in glob.glob('/sys/bus/pci/devices/*/vendor'):\n"
    "  if pathlib.Path(v).read_text().strip() != '0x1ae0': continue\n"
    "  d = pathlib.Path(os.path.join(os.path.dirname(v), 'device')).read_text().strip()\n"
    "  if d in ['0x0027', '0x005e', '0x0063', '0x006f', '0x0056', '0x0062']: n += 1\n"
    "print('chips', n)\n\"";

class TpuHostTest : public WorkersTest {
 protected:
  TpuHostTest() { extra_daemon_args_ = {"--utilization-interval-ms", "200"}; }
  nlohmann::json Ready(const std::string& id, const std::string& type) {
    const nlohmann::json node = CreateReady(
        id, {{"acceleratorType", type}, {"metadata", {{"ssh-keys", PublicKeyLine("tester")}}}});
    return node;
  }
  // Node `id` of `type` in `zone` (where the generation is offered), READY.
  nlohmann::json ReadyIn(const std::string& zone, const std::string& id, const std::string& type) {
    const std::string nodes = "/v2/projects/proj/locations/" + zone + "/nodes";
    Result<ClientResponse> created = Send("POST", nodes + "?nodeId=" + id,
                                          {{"acceleratorType", type},
                                           {"runtimeVersion", "v2-alpha-tpuv5-lite"},
                                           {"metadata", {{"ssh-keys", PublicKeyLine("tester")}}}});
    EXPECT_TRUE(created.ok() && created->status == 200) << (created.ok() ? created->body : "");
    nlohmann::json node;
    EXPECT_TRUE(WaitFor(
        [&] {
          node = Get(nodes + "/" + id);
          return node.is_object() && node.value("state", "") == "READY";
        },
        seconds(60)))
        << node.dump();
    return node;
  }
};

TEST_F(TpuHostTest, AV4HostHasFourChipsAndTpuInfoShowsThem) {
  const nlohmann::json node = Ready("v4host", "v4-8");
  if (HasFailure()) return;
  ProcessResult count = Ssh(node, 0, kTorchXlaChips);
  EXPECT_EQ(count.out, "chips 4\n") << count.err;
  EXPECT_EQ(Ssh(node, 0, "ls /dev/accel*").out,
            "/dev/accel0\n/dev/accel1\n/dev/accel2\n/dev/accel3\n");
  ProcessResult info = Ssh(node, 0, "tpu-info");
  EXPECT_EQ(info.exit_code, 0) << info.err;
  EXPECT_NE(info.out.find("Accelerator type: v4"), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("| /dev/accel3 | TPU v4 chip | 1       |"), std::string::npos)
      << info.out;
  EXPECT_NE(info.out.find("TPU Runtime Utilization"), std::string::npos) << info.out;
  // tpuctl inside does the same, and --version names the generation.
  EXPECT_NE(Ssh(node, 0, "tpuctl tpu-info --version").out.find("- accelerator type: v4"),
            std::string::npos);
}

TEST_F(TpuHostTest, TpuInfoShowsTheRunningJobsHbmAndDutyCycle) {
  const nlohmann::json node = Ready("busy", "v4-8");
  if (HasFailure()) return;
  Result<ClientResponse> job = Send(
      "POST", Base() + "/nodes/busy/jobs?jobId=long",
      nlohmann::json::parse(
          R"({"workload": {"mlp": {"layers": 4, "batch": 256, "hidden": 512, "steps": 10000}}})"));
  ASSERT_TRUE(job.ok() && job->status == 200) << (job.ok() ? job->body : "");
  std::string out;
  EXPECT_TRUE(WaitFor(
      [&] {
        out = Ssh(node, 0, "tpu-info --metric duty_cycle_percent --metric hbm_usage").out;
        return out.find("100.00%") != std::string::npos &&
               out.find("GiB / 32.00 GiB") != std::string::npos;
      },
      seconds(30)))
      << out;
  // The chips' PID column names tpuemud, where the job runs.
  EXPECT_NE(Ssh(node, 0, "tpu-info -p").out.find("projects/proj/locations/"), std::string::npos);
  // --rate refreshes: two snapshots in a second and a half.
  ProcessResult streaming = Ssh(node, 0, "timeout 1.5 tpu-info --rate 0.5; true");
  size_t refreshes = 0;
  for (size_t at = 0; (at = streaming.out.find("Refresh rate: 0.5s", at)) != std::string::npos;
       ++at) {
    ++refreshes;
  }
  EXPECT_GE(refreshes, 2u) << streaming.out;
  (void)Send("POST", Base() + "/nodes/busy/jobs/long:cancel", nlohmann::json::object());
}

TEST_F(TpuHostTest, AV5eHostHasEightChipsThroughVfio) {
  const nlohmann::json node = ReadyIn("us-west4-a", "v5e", "v5litepod-8");
  if (HasFailure()) return;
  EXPECT_EQ(Ssh(node, 0, kTorchXlaChips).out, "chips 8\n");
  EXPECT_EQ(Ssh(node, 0, "ls /dev/vfio | LC_ALL=C sort | tr '\\n' ' '").out,
            "0 1 2 3 4 5 6 7 vfio ");
  EXPECT_EQ(Ssh(node, 0, "cat /sys/kernel/iommu_groups/5/devices/*/vendor").out, "0x1ae0\n");
  EXPECT_NE(Ssh(node, 0, "tpu-info").out.find("| /dev/vfio/7 | TPU v5e chip |"), std::string::npos);
}

}  // namespace
}  // namespace tpuemu::testing
