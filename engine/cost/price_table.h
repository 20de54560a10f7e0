// Prices per TPU chip-hour, per generation: on-demand and spot, with the region, the source and
// the date of each figure, and whether it comes from Google's pricing page.
//
// The built-in table (price_table.cpp) is what the repository ships; prices change, so a JSON
// document can replace any figure (tpuemu-engine compare --prices FILE, or "prices" in a
// POST /_emulator/compare body):
//   {"prices": [{"generation": "v5e", "onDemand": 1.20, "spot": 0.48, "region": "us-west4",
//                "source": "https://cloud.google.com/tpu/pricing", "asOf": "2025-06-01",
//                "fromPricingPage": true}]}
// Each entry names a generation (v2 v3 v4 v5e v5p v6e); its other fields are optional and replace
// only themselves. An override's figures are marked as the override's ("source" defaults to
// "override"). Errors: INVALID_ARGUMENT naming the entry and field. Immutable after Merge:
// thread-safe to read.
#pragma once

#include <array>
#include <string>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "engine/hardware/hardware.h"

namespace tpuemu::engine::cost {

struct ChipPrice {
  Generation generation = Generation::kV4;
  double on_demand_usd_per_chip_hour = 0;
  double spot_usd_per_chip_hour = 0;
  std::string region;
  std::string on_demand_source;  // URL or description
  std::string spot_source;
  std::string as_of;  // date of the figures, YYYY-MM-DD or "unverified"
  bool on_demand_from_pricing_page = false;
  bool spot_from_pricing_page = false;
  std::string note;
};

class PriceTable {
 public:
  static PriceTable Default();
  // Replaces the figures `document` gives (format above).
  Status Merge(const nlohmann::json& document);

  const ChipPrice& Of(Generation generation) const {
    return prices_[static_cast<size_t>(generation)];
  }
  // The table in the override format, with every field.
  nlohmann::json ToJson() const;

 private:
  std::array<ChipPrice, 6> prices_;
};

}  // namespace tpuemu::engine::cost
