// tpu-info's pieces (cli/tpuctl/tpu_info.h): finding the chips as the real tool does, on a fake
// /sys and /dev, and the tables in the layout of Google's tool. The whole command inside a
// worker is tests/e2e/workers_tpu_test.cpp's.
#include "cli/tpuctl/tpu_info.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace tpuemu::cli {
namespace {

namespace fs = std::filesystem;

class TpuInfoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("tpu-info-" + std::to_string(getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_ / "dev");
  }
  void TearDown() override { fs::remove_all(root_); }
  void Function(const std::string& address, const std::string& vendor, const std::string& device,
                const std::string& group = "") {
    const fs::path dir = root_ / "sys/bus/pci/devices" / address;
    fs::create_directories(dir);
    std::ofstream(dir / "vendor") << vendor << "\n";
    std::ofstream(dir / "device") << device << "\n";
    if (!group.empty())
      fs::create_symlink("../../../../kernel/iommu_groups/" + group, dir / "iommu_group");
  }
  fs::path root_;
};

TEST_F(TpuInfoTest, FindsGoogleTpuFunctionsAndTheirAccelNodes) {
  Function("0000:00:03.0", "0x1af4", "0x1004");  // virtio: not a chip
  Function("0000:00:04.0", "0x1ae0", "0x005e");
  Function("0000:00:05.0", "0x1ae0", "0x005e");
  Function("0000:00:06.0", "0x1ae0", "0x1234");  // Google, but no TPU id
  std::ofstream(root_ / "dev/accel0");
  std::ofstream(root_ / "dev/accel1");
  const std::vector<TpuChip> chips =
      FindTpuChips((root_ / "sys").string(), (root_ / "dev").string());
  ASSERT_EQ(chips.size(), 2u);
  EXPECT_EQ(chips[0].address, "0000:00:04.0");
  EXPECT_EQ(chips[0].device_path, "/dev/accel0");
  EXPECT_EQ(chips[1].device_path, "/dev/accel1");
  EXPECT_EQ(TpuChipType(chips[0].device_id), "TPU v4 chip");
}

TEST_F(TpuInfoTest, FindsVfioGroupsFromTheIommuGroupLink) {
  Function("0000:00:04.0", "0x1ae0", "0x006f", "0");
  Function("0000:00:05.0", "0x1ae0", "0x006f", "1");
  fs::create_directories(root_ / "dev/vfio");
  std::ofstream(root_ / "dev/vfio/0");
  std::ofstream(root_ / "dev/vfio/1");
  const std::vector<TpuChip> chips =
      FindTpuChips((root_ / "sys").string(), (root_ / "dev").string());
  ASSERT_EQ(chips.size(), 2u);
  EXPECT_EQ(chips[1].device_path, "/dev/vfio/1");
  EXPECT_EQ(TpuChipType("0x006f"), "TPU v6e chip");
}

TEST(TpuInfoRenderTest, PrintsTheToolsTables) {
  TpuInfoReport report;
  report.accelerator_type = "v6e-4";
  report.tensorcores_per_chip = 1;
  report.chips = {{"0000:00:04.0", "0x006f", "/dev/vfio/0"},
                  {"0000:00:05.0", "0x006f", "/dev/vfio/1"}};
  report.usage = {.sampled = true,
                  .duty_cycle = 1.0,
                  .tensorcore_utilization = 0.136,
                  .hbm_used_bytes = int64_t{10} << 30,
                  .hbm_total_bytes = int64_t{32} << 30,
                  .job = "projects/p/locations/z/nodes/n/jobs/j"};
  const std::string out = RenderTpuInfo(report, {});
  EXPECT_NE(out.find("Accelerator type: v6e\n"), std::string::npos) << out;
  EXPECT_NE(out.find("TPU Chips\n\n| Chip        | Type         | Devices | PID     |\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("| /dev/vfio/1 | TPU v6e chip | 1       | tpuemud |"), std::string::npos)
      << out;
  EXPECT_NE(out.find("| 1    | 10.00 GiB / 32.00 GiB | 100.00%    |"), std::string::npos) << out;
  EXPECT_NE(out.find("| 1       | 13.60%                 |"), std::string::npos) << out;
  // One table alone, with the tool's title.
  const std::string hbm = RenderTpuInfo(report, {"hbm_usage"});
  EXPECT_NE(hbm.find("TPU HBM Usage\n"), std::string::npos) << hbm;
  EXPECT_EQ(hbm.find("TPU Chips"), std::string::npos) << hbm;
  EXPECT_EQ(hbm.find("Duty cycle"), std::string::npos) << hbm;
  // No sample yet: N/A, and it says why.
  report.usage = {};
  const std::string none = RenderTpuInfo(report, {});
  EXPECT_NE(none.find("| 0    | N/A             | N/A        |"), std::string::npos) << none;
  EXPECT_NE(none.find("No utilization samples"), std::string::npos) << none;
}

}  // namespace
}  // namespace tpuemu::cli
