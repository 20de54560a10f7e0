// TPU hardware: per-generation constants, the catalog of accelerator types, and Slice.
//
// Every constant cites docs/hardware-model.md §2 (which cites Google's
// docs, jax's tpu_info.py and the scaling book). Peak bf16 FLOPS is *derived* from the constants
// (TensorCores x MXUs x dim² x MACs/cell/cycle x 2 x clock) and a test holds it to the published
// peak.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace tpuemu::engine {

// Byte units for HBM capacities and memory figures.
inline constexpr double kMiB = 1024.0 * 1024.0;
inline constexpr double kGiB = 1024.0 * kMiB;

enum class Generation { kV2, kV3, kV4, kV5e, kV5p, kV6e };

// Constants of one TPU generation, per chip unless the name says otherwise.
struct ChipSpec {
  Generation generation;
  std::string_view name;         // "v4", "v5e"
  std::string_view type_prefix;  // accelerator type prefix: "v4", "v5litepod"
  std::string_view api_type;     // AcceleratorConfig.Type name: "V4", "V5LITE_POD"
  int api_type_number;           // AcceleratorConfig.Type number (enum-encoding=int)
  bool name_counts_chips;        // v5litepod-N / v6e-N count chips; v2..v5p count TensorCores

  int tensorcores_per_chip;
  int mxus_per_tensorcore;
  int mxu_dim;                  // the MXU is mxu_dim x mxu_dim processing elements
  int macs_per_cell_per_cycle;  // 1 except where calibration needs more (v6e, see hardware.cpp)
  double clock_hz;
  double hbm_bytes;
  double hbm_bandwidth_bytes_per_s;
  int ici_links;
  double ici_link_bandwidth_bytes_per_s;  // one direction, per link
  int chips_per_host;
  double vmem_bytes_per_tensorcore;
  double published_peak_bf16_flops;  // what the docs print, for the peak check and the catalog

  // Derived: TensorCores x MXUs x dim² x MACs/cell/cycle x 2 flops x clock.
  double PeakBf16Flops() const;
  double PeakBf16FlopsPerTensorCore() const;
  double HbmBytesPerTensorCore() const { return hbm_bytes / tensorcores_per_chip; }
};

// Every generation, oldest first.
std::span<const ChipSpec> AllGenerations();
const ChipSpec& Spec(Generation generation);
// Looks a generation up by its accelerator-type prefix ("v5litepod") or its name ("v5e").
Result<Generation> ParseGeneration(std::string_view name);

// One documented accelerator type: "v4-32" is 16 chips in a 2x2x4 torus on 4 hosts.
struct AcceleratorType {
  std::string name;  // "v4-32"
  Generation generation;
  int chips;
  int tensorcores;
  std::string topology;  // "2x2x4"; 2D for v2, v3, v5e, v6e
  int workers;           // TPU VM hosts, = len(networkEndpoints)
};

// Every documented size of every generation, in generation then size order.
const std::vector<AcceleratorType>& AllAcceleratorTypes();
// NOT_FOUND naming the type when it is not a documented size.
Result<AcceleratorType> FindAcceleratorType(std::string_view name);
// From AcceleratorConfig {type: "V4" or "7", topology: "2x2x4"}.
Result<AcceleratorType> FindAcceleratorTypeByConfig(std::string_view api_type,
                                                    std::string_view topology);

// The hardware a program runs on: an accelerator type with its generation's constants.
class Slice {
 public:
  // "v3-8", "v4-32", "v5litepod-16", "v6e-256"; NOT_FOUND for an undocumented type.
  static Result<Slice> FromAcceleratorType(std::string_view name);
  explicit Slice(AcceleratorType type) : type_(std::move(type)) {}

  const AcceleratorType& type() const { return type_; }
  const ChipSpec& spec() const { return Spec(type_.generation); }
  int chips() const { return type_.chips; }
  int tensorcores() const { return type_.tensorcores; }
  int mxus() const { return tensorcores() * spec().mxus_per_tensorcore; }
  double PeakBf16Flops() const { return spec().PeakBf16Flops() * chips(); }
  double HbmBytes() const { return spec().hbm_bytes * chips(); }

 private:
  AcceleratorType type_;
};

}  // namespace tpuemu::engine
