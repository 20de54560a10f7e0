// The Cloud TPU catalog: which zones exist, which accelerator types each zone offers, which runtime
// versions exist. Facts from docs/api-fidelity.md §7 (zones per generation) and §8
// (versions); the hardware behind each type comes from engine/hardware/hardware.h.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "engine/hardware/hardware.h"

namespace tpuemu::service {

// The engine's figures for one accelerator type (engine/hardware/hardware.h), for GET
// /_emulator/hardware.
struct AcceleratorHardware {
  std::string type;        // "v4-8"
  std::string generation;  // "v4"
  std::string topology;    // "2x2x1"
  int chips = 0;
  int workers = 0;  // TPU VM hosts
  int tensorcores = 0;
  int mxus_per_tensorcore = 0;
  int mxu_size = 0;  // the MXU is mxu_size x mxu_size
  double clock_hz = 0;
  double hbm_bytes = 0;                  // whole slice
  double hbm_bandwidth_bytes_per_s = 0;  // per chip
  double peak_bf16_tflops = 0;           // whole slice, derived from the constants
  std::vector<std::string> zones;        // zones that offer the type, in catalog order
};

struct Zone {
  std::string id;      // "us-central1-a"
  std::string region;  // "us-central1"
};

class Catalog {
 public:
  // The documented offering.
  static const Catalog& Default();

  const std::vector<Zone>& zones() const { return zones_; }
  const std::vector<std::string>& runtime_versions() const { return runtime_versions_; }

  // Plain lookups: NOT_FOUND errors are the caller's.
  const Zone* FindZone(std::string_view zone_id) const;
  // The parent check of a list: OK for "-" (every zone, Google's `locations/-`) or a zone of the
  // catalog, else NOT_FOUND "Resource 'projects/{project}/locations/{zone}' was not found".
  Status CheckListLocation(std::string_view project, std::string_view zone) const;
  bool HasRuntimeVersion(std::string_view version) const;
  // Accelerator types offered in `zone`, in catalog order.
  std::vector<engine::AcceleratorType> TypesInZone(std::string_view zone_id) const;
  bool Offers(std::string_view zone_id, const engine::AcceleratorType& type) const;
  // Hardware of every documented type, in engine catalog order (types no zone offers included,
  // with empty `zones`).
  std::vector<AcceleratorHardware> Hardware() const;
  // NOT_FOUND "Accelerator type 'v9-8' is not a known accelerator type." for an unknown name.
  Result<AcceleratorHardware> HardwareOf(std::string_view type) const;

 private:
  Catalog();
  std::vector<Zone> zones_;
  std::vector<std::string> runtime_versions_;
};

// "us-central1-a" -> "us-central1".
std::string RegionOf(std::string_view zone_id);

}  // namespace tpuemu::service
