// The TPU chips a worker's host has, as software inside looks for them: PCI functions of
// Google's vendor id under /sys/bus/pci/devices (what torch_xla's and JAX's chip counts read),
// and the generation's device nodes — /dev/accel<i> on v2–v4, VFIO (/dev/vfio/vfio, a numbered
// group per chip, /sys/kernel/iommu_groups/<g>/devices/<pci address>) on v5e, v5p and v6e, which
// Ray's TPU detection reads.
//
// Everything is a stand-in: the PCI functions are plain files on a tmpfs mounted over the
// worker's /sys/bus/pci/devices (which then lists only the chips, not the host's devices), and
// the device nodes are character devices of major 120, which the kernel reserves for local and
// experimental use and never hands to a driver (Documentation/admin-guide/devices.txt): opening
// one fails with ENXIO. docs/workers.md ("What is real and what is a stand-in") says so.
//
// Used by tpuemu-sandbox's boot (sandbox/helper_main.cpp), as host root in the worker's mount
// namespace before the pivot; plain C++ and libc, as the static helper needs.
#pragma once

#include <sys/types.h>

#include <string>

namespace tpuemu::sandbox {

struct TpuDevices {
  int chips = 0;          // chips on this host; 0: none shown
  std::string device_id;  // the generation's PCI device id, "0x005e"
  bool vfio = false;      // device nodes: VFIO groups (v5e and later) or /dev/accel<i>
};

// The PCI address of chip `i` as this host shows it: "0000:00:04.0", "0000:00:05.0", ...
std::string TpuPciAddress(int chip);

// Mounts and fills the stand-ins under `root` (the worker's tree: its /sys already the host's
// read-only bind, its /dev the worker's tmpfs), every file owned by host id `owner` (root
// inside). Returns "" or the failed step with its errno text.
std::string BuildTpuDevices(const std::string& root, const TpuDevices& devices, uid_t owner);

}  // namespace tpuemu::sandbox
