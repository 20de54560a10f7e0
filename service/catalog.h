// The Cloud TPU catalog: which zones exist, which accelerator types each zone offers, which runtime
// versions exist. Facts from reference/cloud-tpu-api.md §5 (zones per generation) and §6
// (versions); the hardware behind each type comes from engine/hardware.h.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "engine/hardware.h"
#include "engine/status.h"

namespace tpuemu::service {

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

  // NOT_FOUND "Resource 'projects/p/locations/z' was not found" style errors are the caller's;
  // these return plain lookups.
  const Zone* FindZone(std::string_view zone_id) const;
  bool HasRuntimeVersion(std::string_view version) const;
  // Accelerator types offered in `zone`, in catalog order.
  std::vector<engine::AcceleratorType> TypesInZone(std::string_view zone_id) const;
  bool Offers(std::string_view zone_id, const engine::AcceleratorType& type) const;

 private:
  Catalog();
  std::vector<Zone> zones_;
  std::vector<std::string> runtime_versions_;
};

// "us-central1-a" -> "us-central1".
std::string RegionOf(std::string_view zone_id);

}  // namespace tpuemu::service
