// `tpu-info` (and `tpuctl tpu-info`): Google's tpu-info CLI as a TPU VM worker of tpuemud shows it
// (the layout of its README, github.com/AI-Hypercomputer/cloud-accelerator-diagnostics,
// tpu_info/README.md): the chips of this host, their HBM use and duty cycle, TensorCore
// utilization; `--streaming --rate S` refreshes every S seconds, `--metric NAME` shows one table,
// `--process` the processes, `--version` the versions.
//
// The chips are what the host shows, found as the real tool finds them: PCI functions of vendor
// 0x1ae0 under /sys/bus/pci/devices and their /dev/accel<i> or /dev/vfio/<group> (inside a
// worker: tpuemud's stand-ins, sandbox/tpu_devices.h). The figures come from the node's
// utilization samples (GET …/nodes/N/metrics, what the sampler recorded of its running job:
// service/observability/utilization_sampler.cpp), spread evenly over the node's chips as a
// data-parallel job spreads its memory; the node is the worker's (metadata server), or --node /
// --zone. Not thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace tpuemu::cli {

struct Context;

struct TpuChip {
  std::string address;      // "0000:00:04.0"
  std::string device_id;    // "0x005e"
  std::string device_path;  // "/dev/accel0", "/dev/vfio/0"; "" when there is none
};

// The chips under `sys`/bus/pci/devices (vendor 0x1ae0 and a TPU device id), in address order,
// with their device nodes under `dev`.
std::vector<TpuChip> FindTpuChips(const std::string& sys = "/sys", const std::string& dev = "/dev");
// "TPU v4 chip" for "0x005e"; "TPU chip" for an id it does not know.
std::string TpuChipType(const std::string& device_id);

// What the node's last utilization sample says, per chip of the node.
struct TpuUsage {
  bool sampled = false;  // false: no sample (no node known, or the sampler has none yet)
  double duty_cycle = 0;
  double tensorcore_utilization = 0;
  int64_t hbm_used_bytes = 0;   // per chip
  int64_t hbm_total_bytes = 0;  // per chip
  std::string job;              // the running job's name, "" when none
};

struct TpuInfoReport {
  std::string accelerator_type;  // "v4-32"; "" when unknown
  int tensorcores_per_chip = 1;  // rows of the TensorCore table per chip
  std::vector<TpuChip> chips;
  TpuUsage usage;
};

// The tables, as the tool prints them. `metrics` empty: every table; else only those named
// (hbm_usage, duty_cycle_percent, tensorcore_utilization).
std::string RenderTpuInfo(const TpuInfoReport& report, const std::vector<std::string>& metrics);
// The metric names --metric takes.
const std::vector<std::string>& TpuInfoMetrics();

// Registers `tpu-info` on `app` (tpuctl's main also runs it when called as `tpu-info`).
void AddTpuInfoCommand(CLI::App& app, Context& ctx);

}  // namespace tpuemu::cli
