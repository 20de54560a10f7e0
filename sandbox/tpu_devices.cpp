// The stand-in TPU chips of a worker (tpu_devices.h).
#include "sandbox/tpu_devices.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

namespace tpuemu::sandbox {
namespace {

constexpr unsigned kGoogleVendorId = 0x1ae0;
// Character major 120: "LOCAL/EXPERIMENTAL USE", never allocated to a driver (devices.txt).
constexpr unsigned kStandInMajor = 120;
constexpr unsigned kVfioGroupMinorBase = 64;
constexpr unsigned kVfioContainerMinor = 255;
// The first chip's PCI slot: a TPU VM's chips follow its virtio and gVNIC functions.
constexpr int kFirstSlot = 4;

// "" or "STEP: strerror(errno)".
std::string Failed(const std::string& step) { return step + ": " + strerror(errno); }

std::string WriteFile(const std::string& path, const std::string& content, uid_t owner) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0444);
  if (fd < 0) return Failed("create " + path);
  const bool ok = write(fd, content.data(), content.size()) == static_cast<ssize_t>(content.size());
  close(fd);
  if (!ok) return Failed("write " + path);
  if (lchown(path.c_str(), owner, owner) != 0) return Failed("chown " + path);
  return "";
}

std::string MakeDir(const std::string& path, uid_t owner) {
  if (mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) return Failed("mkdir " + path);
  if (lchown(path.c_str(), owner, owner) != 0) return Failed("chown " + path);
  return "";
}

std::string MakeLink(const std::string& target, const std::string& path, uid_t owner) {
  if (symlink(target.c_str(), path.c_str()) != 0) return Failed("symlink " + path);
  if (lchown(path.c_str(), owner, owner) != 0) return Failed("chown " + path);
  return "";
}

std::string MakeCharDevice(const std::string& path, unsigned minor, uid_t owner) {
  if (mknod(path.c_str(), S_IFCHR | 0666, makedev(kStandInMajor, minor)) != 0) {
    return Failed("mknod " + path);
  }
  // mknod's mode is cut by the umask: every user of a TPU VM opens its chips.
  if (chmod(path.c_str(), 0666) != 0) return Failed("chmod " + path);
  if (lchown(path.c_str(), owner, owner) != 0) return Failed("chown " + path);
  return "";
}

std::string MountTmpfs(const std::string& path, uid_t owner) {
  const std::string options =
      "mode=0755,size=1m,uid=" + std::to_string(owner) + ",gid=" + std::to_string(owner);
  if (mount("tpuemu-devices", path.c_str(), "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
            options.c_str()) != 0) {
    return Failed("mount a tmpfs on " + path);
  }
  return "";
}

std::string Hex4(unsigned value) {
  char text[8];
  snprintf(text, sizeof(text), "0x%04x", value);
  return text;
}

// The first 64 bytes of the function's configuration space (a type 0 header), as lspci reads
// them: ids, command (memory space and bus master on), class "unassigned" (0xff), the subsystem.
std::string ConfigSpace(unsigned device_id) {
  uint8_t c[64] = {};
  auto put16 = [&](int at, unsigned v) {
    c[at] = static_cast<uint8_t>(v & 0xff);
    c[at + 1] = static_cast<uint8_t>(v >> 8);
  };
  put16(0x00, kGoogleVendorId);
  put16(0x02, device_id);
  put16(0x04, 0x0006);
  c[0x0b] = 0xff;  // base class: unassigned; subclass and programming interface 0
  put16(0x2c, kGoogleVendorId);
  put16(0x2e, device_id);
  return std::string(reinterpret_cast<const char*>(c), sizeof(c));
}

// One chip's folder in the devices tmpfs, and its IOMMU group when the host uses VFIO.
std::string BuildFunction(const std::string& sys, const TpuDevices& d, unsigned device_id, int i,
                          uid_t owner) {
  const std::string address = TpuPciAddress(i);
  const std::string dir = sys + "/bus/pci/devices/" + address;
  char ids[64];
  snprintf(ids, sizeof(ids), "%04X:%04X", kGoogleVendorId, device_id);
  char alias[96];
  snprintf(alias, sizeof(alias), "pci:v%08Xd%08Xsv%08Xsd%08Xbcffsc00i00", kGoogleVendorId,
           device_id, kGoogleVendorId, device_id);
  std::string resource;
  for (int r = 0; r < 13; ++r)
    resource += "0x0000000000000000 0x0000000000000000 0x0000000000000000\n";
  const std::pair<const char*, std::string> files[] = {
      {"vendor", Hex4(kGoogleVendorId) + "\n"},
      {"device", d.device_id + "\n"},
      {"subsystem_vendor", Hex4(kGoogleVendorId) + "\n"},
      {"subsystem_device", d.device_id + "\n"},
      {"class", "0xff0000\n"},
      {"revision", "0x00\n"},
      {"numa_node", "0\n"},
      {"irq", "0\n"},
      {"enable", "1\n"},
      {"uevent", std::string("PCI_CLASS=FF0000\nPCI_ID=") + ids + "\nPCI_SUBSYS_ID=" + ids +
                     "\nPCI_SLOT_NAME=" + address + "\nMODALIAS=" + alias + "\n"},
      {"modalias", std::string(alias) + "\n"},
      {"resource", resource},
      {"config", ConfigSpace(device_id)},
  };
  std::string err = MakeDir(dir, owner);
  for (const auto& [name, content] : files) {
    if (err.empty()) err = WriteFile(dir + "/" + name, content, owner);
  }
  if (!err.empty() || !d.vfio) return err;
  const std::string group = std::to_string(i);
  const std::string group_dir = sys + "/kernel/iommu_groups/" + group;
  if (err.empty()) err = MakeDir(group_dir, owner);
  if (err.empty()) err = MakeDir(group_dir + "/devices", owner);
  if (err.empty()) err = WriteFile(group_dir + "/type", "DMA\n", owner);
  if (err.empty()) {
    err = MakeLink("../../../../bus/pci/devices/" + address, group_dir + "/devices/" + address,
                   owner);
  }
  if (err.empty()) {
    err = MakeLink("../../../../kernel/iommu_groups/" + group, dir + "/iommu_group", owner);
  }
  return err;
}

}  // namespace

std::string TpuPciAddress(int chip) {
  char text[32];
  snprintf(text, sizeof(text), "0000:00:%02x.0", static_cast<unsigned>(kFirstSlot + chip) & 0x1f);
  return text;
}

std::string BuildTpuDevices(const std::string& root, const TpuDevices& d, uid_t owner) {
  if (d.chips <= 0) return "";
  char* end = nullptr;
  const unsigned long device_id = strtoul(d.device_id.c_str(), &end, 16);
  if (d.device_id.rfind("0x", 0) != 0 || end == nullptr || *end != '\0' || device_id > 0xffff) {
    errno = EINVAL;
    return Failed("TPU device id " + d.device_id);
  }
  const std::string sys = root + "/sys";
  std::string err = MountTmpfs(sys + "/bus/pci/devices", owner);
  if (err.empty() && d.vfio) err = MountTmpfs(sys + "/kernel/iommu_groups", owner);
  for (int i = 0; err.empty() && i < d.chips; ++i) {
    err = BuildFunction(sys, d, static_cast<unsigned>(device_id), i, owner);
  }
  const std::string dev = root + "/dev";
  if (err.empty() && d.vfio) {
    err = MakeDir(dev + "/vfio", owner);
    if (err.empty()) err = MakeCharDevice(dev + "/vfio/vfio", kVfioContainerMinor, owner);
    for (int i = 0; err.empty() && i < d.chips; ++i) {
      err = MakeCharDevice(dev + "/vfio/" + std::to_string(i),
                           kVfioGroupMinorBase + static_cast<unsigned>(i), owner);
    }
  }
  for (int i = 0; err.empty() && !d.vfio && i < d.chips; ++i) {
    err = MakeCharDevice(dev + "/accel" + std::to_string(i), static_cast<unsigned>(i), owner);
  }
  return err;
}

}  // namespace tpuemu::sandbox
