#include "service/catalog/catalog.h"

#include <algorithm>
#include <array>
#include <set>

#include "service/common/not_found.h"

namespace tpuemu::service {
namespace {

using engine::Generation;

struct Offering {
  Generation generation;
  std::string_view zone;
  bool multi_host;  // false: single-host sizes only (v3 pods are only in europe-west4-a)
};

// docs/api-fidelity.md §7 "Zones".
constexpr Offering kOfferings[] = {
    {Generation::kV2, "us-central1-b", true},  {Generation::kV2, "us-central1-c", true},
    {Generation::kV2, "us-central1-f", true},  {Generation::kV2, "europe-west4-a", true},
    {Generation::kV2, "asia-east1-c", true},   {Generation::kV3, "us-central1-a", false},
    {Generation::kV3, "us-central1-b", false}, {Generation::kV3, "us-central1-f", false},
    {Generation::kV3, "europe-west4-a", true}, {Generation::kV4, "us-central2-b", true},
    {Generation::kV5e, "us-central1-a", true}, {Generation::kV5e, "us-east5-a", true},
    {Generation::kV5e, "us-east5-b", true},    {Generation::kV5e, "us-east5-c", true},
    {Generation::kV5e, "us-south1-a", true},   {Generation::kV5e, "us-west1-c", true},
    {Generation::kV5e, "us-west4-a", true},    {Generation::kV5p, "us-east5-a", true},
    {Generation::kV5p, "us-central1-a", true}, {Generation::kV5p, "europe-west4-b", true},
    {Generation::kV6e, "us-east1-d", true},    {Generation::kV6e, "us-east5-b", true},
    {Generation::kV6e, "us-central1-b", true},
};

// docs/api-fidelity.md §8: current images first, then TensorFlow and older ones.
constexpr std::string_view kRuntimeVersions[] = {
    "tpu-ubuntu2204-base",
    "v2-alpha-tpuv6e",
    "v2-alpha-tpuv5",
    "v2-alpha-tpuv5-lite",
    "v2-alpha-tpuv4",
    "v2-alpha",
    "tpu-vm-base",
    "tpu-vm-v4-base",
    "tpu-vm-cos-stable",
    "tpu-vm-pt-1.13",
    "tpu-vm-v4-pt-1.13",
    "tpu-vm-tf-2.10.0-v4",
    "tpu-vm-tf-2.10.0-pod-v4",
    "tpu-vm-tf-2.14.1",
    "tpu-vm-tf-2.14.1-pod",
    "tpu-vm-tf-2.15.0-pjrt",
    "tpu-vm-tf-2.15.0-pod-pjrt",
    "tpu-vm-tf-2.16.1-pjrt",
    "tpu-vm-tf-2.16.1-pod-pjrt",
    "tpu-vm-tf-2.17.0-pjrt",
    "tpu-vm-tf-2.17.0-pod-pjrt",
};

bool IsMultiHost(const engine::AcceleratorType& type) { return type.workers > 1; }

}  // namespace

std::string RegionOf(std::string_view zone_id) {
  std::size_t dash = zone_id.rfind('-');
  return std::string(dash == std::string_view::npos ? zone_id : zone_id.substr(0, dash));
}

Catalog::Catalog() {
  std::set<std::string_view> seen;
  for (const Offering& o : kOfferings) {
    if (seen.insert(o.zone).second) zones_.push_back({std::string(o.zone), RegionOf(o.zone)});
  }
  std::sort(zones_.begin(), zones_.end(), [](const Zone& a, const Zone& b) { return a.id < b.id; });
  for (std::string_view v : kRuntimeVersions) runtime_versions_.emplace_back(v);
}

const Catalog& Catalog::Default() {
  static const Catalog catalog;
  return catalog;
}

const Zone* Catalog::FindZone(std::string_view zone_id) const {
  for (const Zone& z : zones_) {
    if (z.id == zone_id) return &z;
  }
  return nullptr;
}

Status Catalog::CheckListLocation(std::string_view project, std::string_view zone) const {
  if (zone == "-" || FindZone(zone) != nullptr) return Status::Ok();
  return ResourceNotFound("projects/" + std::string(project) + "/locations/" + std::string(zone));
}

bool Catalog::HasRuntimeVersion(std::string_view version) const {
  return std::find(runtime_versions_.begin(), runtime_versions_.end(), version) !=
         runtime_versions_.end();
}

bool Catalog::Offers(std::string_view zone_id, const engine::AcceleratorType& type) const {
  for (const Offering& o : kOfferings) {
    if (o.zone == zone_id && o.generation == type.generation &&
        (o.multi_host || !IsMultiHost(type))) {
      return true;
    }
  }
  return false;
}

std::vector<engine::AcceleratorType> Catalog::TypesInZone(std::string_view zone_id) const {
  std::vector<engine::AcceleratorType> types;
  for (const engine::AcceleratorType& t : engine::AllAcceleratorTypes()) {
    if (Offers(zone_id, t)) types.push_back(t);
  }
  return types;
}

namespace {

AcceleratorHardware HardwareFor(const Catalog& catalog, const engine::AcceleratorType& type) {
  engine::Slice slice(type);
  const engine::ChipSpec& spec = slice.spec();
  AcceleratorHardware hw;
  hw.type = type.name;
  hw.generation = std::string(spec.name);
  hw.topology = type.topology;
  hw.chips = type.chips;
  hw.workers = type.workers;
  hw.tensorcores = type.tensorcores;
  hw.mxus_per_tensorcore = spec.mxus_per_tensorcore;
  hw.mxu_size = spec.mxu_dim;
  hw.clock_hz = spec.clock_hz;
  hw.hbm_bytes = slice.HbmBytes();
  hw.hbm_bandwidth_bytes_per_s = spec.hbm_bandwidth_bytes_per_s;
  hw.peak_bf16_tflops = slice.PeakBf16Flops() / 1e12;
  for (const Zone& zone : catalog.zones()) {
    if (catalog.Offers(zone.id, type)) hw.zones.push_back(zone.id);
  }
  return hw;
}

}  // namespace

std::vector<AcceleratorHardware> Catalog::Hardware() const {
  std::vector<AcceleratorHardware> all;
  for (const engine::AcceleratorType& t : engine::AllAcceleratorTypes()) {
    all.push_back(HardwareFor(*this, t));
  }
  return all;
}

Result<AcceleratorHardware> Catalog::HardwareOf(std::string_view type) const {
  Result<engine::AcceleratorType> found = engine::FindAcceleratorType(type);
  if (!found.ok()) {
    return Status::NotFound("Accelerator type '" + std::string(type) +
                            "' is not a known accelerator type.");
  }
  return HardwareFor(*this, *found);
}

}  // namespace tpuemu::service
