// The stand-in TPU chips of a worker (sandbox/tpu_devices.h), seen from inside as the software
// that looks for them sees them: torch_xla's num_available_chips() (its code, run with the
// host's python3), Ray's VFIO count, `ls /dev/accel*`, lspci where installed. And harmless: the
// device nodes lead to no driver, root inside cannot change the tree.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <string>

#include "sandbox/tpu_devices.h"
#include "sandbox/worker_box.h"
#include "tests/sandbox/sandbox_test_util.h"

namespace tpuemu::sandbox {
namespace {

using std::chrono::milliseconds;

// torch_xla/_internal/tpu.py's num_available_chips(), as published.
constexpr const char* kTorchXlaChipCount = R"(
import glob, os, pathlib
_GOOGLE_PCI_VENDOR_ID = '0x1ae0'
_TPU_PCI_DEVICE_IDS = ['0x0027', '0x005e', '0x0063', '0x006f', '0x0056', '0x0062']
def num_available_chips():
  num_chips = 0
  for vendor_path in glob.glob('/sys/bus/pci/devices/*/vendor'):
    vendor_id = pathlib.Path(vendor_path).read_text().strip()
    if vendor_id != _GOOGLE_PCI_VENDOR_ID:
      continue
    device_path = os.path.join(os.path.dirname(vendor_path), 'device')
    device_id = pathlib.Path(device_path).read_text().strip()
    if device_id in _TPU_PCI_DEVICE_IDS:
      num_chips += 1
  return num_chips
print(num_available_chips())
)";

// Ray's TPU accelerator manager: /dev/accel* first, else the numbered VFIO groups whose IOMMU
// group holds a function of Google's vendor id.
constexpr const char* kRayChipCount = R"(
import glob, os
accel = glob.glob('/dev/accel*')
if accel:
  print(len(accel))
else:
  n = 0
  for entry in os.listdir('/dev/vfio'):
    if not entry.isdigit():
      continue
    for dev in glob.glob('/sys/kernel/iommu_groups/%s/devices/*' % entry):
      if open(os.path.join(dev, 'vendor')).read().strip() == '0x1ae0':
        n += 1
  print(n)
)";

class TpuDevicesTest : public ::testing::Test {
 protected:
  void Boot(const TpuDevices& tpu) {
    support_ = Probe(tmp_.path() + "/workers", "");
    if (!support_.ok) GTEST_SKIP() << support_.reason;
    BootSpec spec;
    spec.dir = tmp_.path() + "/workers/w";
    spec.hostname = "t1v-n-tpu-w-0";
    spec.cgroup_name = "tpu-devices-" + std::to_string(getpid());
    spec.tpu = tpu;
    Result<std::unique_ptr<WorkerBox>> box = WorkerBox::Boot(support_, spec);
    ASSERT_TRUE(box.ok()) << box.status().ToString();
    box_ = std::move(box).value();
  }
  std::pair<int, std::string> Sh(const std::string& script) {
    Result<std::pair<int, std::string>> r =
        box_->Run({"/bin/sh", "-c", script}, "", milliseconds(10000));
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? r.value() : std::make_pair(-1, std::string());
  }
  std::string Python(const std::string& code) {
    Result<std::pair<int, std::string>> r =
        box_->Run({"/usr/bin/python3", "-c", code}, "", milliseconds(10000));
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? r->second : "";
  }

  testing::TempDir tmp_;
  Support support_;
  std::unique_ptr<WorkerBox> box_;
};

TEST_F(TpuDevicesTest, V4HostShowsFourChipsAsPciFunctionsAndAccelNodes) {
  Boot({.chips = 4, .device_id = "0x005e", .vfio = false});
  if (!box_) return;
  EXPECT_EQ(Sh("cat /sys/bus/pci/devices/*/vendor").second, "0x1ae0\n0x1ae0\n0x1ae0\n0x1ae0\n");
  EXPECT_EQ(Sh("cat /sys/bus/pci/devices/0000:00:04.0/device").second, "0x005e\n");
  EXPECT_EQ(Sh("ls /dev/accel*").second, "/dev/accel0\n/dev/accel1\n/dev/accel2\n/dev/accel3\n");
  EXPECT_EQ(Sh("test -c /dev/accel3 && stat -c '%t %a' /dev/accel3").second, "78 666\n");
  EXPECT_FALSE(Sh("test -e /dev/vfio").first == 0);
  if (access("/usr/bin/python3", X_OK) != 0) {
    GTEST_SKIP() << "no /usr/bin/python3: torch_xla's and Ray's counts not run";
  }
  EXPECT_EQ(Python(kTorchXlaChipCount), "4\n");
  EXPECT_EQ(Python(kRayChipCount), "4\n");
  // A stand-in leads to no driver: opening it fails (ENXIO), even for root inside.
  EXPECT_NE(Sh("cat /dev/accel0").first, 0);
}

TEST_F(TpuDevicesTest, V5eHostShowsEightChipsThroughVfio) {
  Boot({.chips = 8, .device_id = "0x0063", .vfio = true});
  if (!box_) return;
  EXPECT_EQ(Sh("ls /dev/vfio | LC_ALL=C sort | tr '\\n' ' '").second, "0 1 2 3 4 5 6 7 vfio ");
  EXPECT_FALSE(Sh("ls /dev/accel* 2>/dev/null").first == 0);
  EXPECT_EQ(Sh("cat /sys/kernel/iommu_groups/7/devices/*/device").second, "0x0063\n");
  EXPECT_EQ(Sh("readlink /sys/bus/pci/devices/0000:00:0b.0/iommu_group").second,
            "../../../../kernel/iommu_groups/7\n");
  if (access("/usr/bin/python3", X_OK) == 0) {
    EXPECT_EQ(Python(kTorchXlaChipCount), "8\n");
    EXPECT_EQ(Python(kRayChipCount), "8\n");
  }
  // Only the worker's view has them: the host's PCI bus shows no Google function.
  for (const auto& entry : std::filesystem::directory_iterator("/sys/bus/pci/devices")) {
    EXPECT_NE(testing::ReadFile(entry.path().string() + "/vendor"), "0x1ae0\n") << entry.path();
  }
  if (access("/usr/bin/lspci", X_OK) == 0) {
    const std::string listed = Sh("lspci -d 1ae0: 2>&1").second;
    EXPECT_NE(listed.find("00:0b.0"), std::string::npos) << listed;
  } else {
    std::cout << "lspci not installed (pciutils): its listing not checked\n";
  }
}

TEST(TpuPciAddressTest, ChipsFollowTheVirtioFunctions) {
  EXPECT_EQ(TpuPciAddress(0), "0000:00:04.0");
  EXPECT_EQ(TpuPciAddress(7), "0000:00:0b.0");
}

}  // namespace
}  // namespace tpuemu::sandbox
