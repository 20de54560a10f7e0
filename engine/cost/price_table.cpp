#include "engine/cost/price_table.h"

namespace tpuemu::engine::cost {
namespace {

using nlohmann::json;

constexpr const char* kPricingPage = "https://cloud.google.com/tpu/pricing";
// The v4 figure as a third party quoted Google's pricing page ("on-demand / evaluation" price
// per chip-hour) when it posted the question on 2022-08-11.
constexpr const char* kV4Quote =
    "https://www.infer-pub.com/questions/1114-will-the-price-per-chip-hour-of-google-s-cloud-"
    "based-tensor-processing-unit-tpu-v4-be-greater-than-3-22-on-january-1-2023";
constexpr const char* kRecalled =
    "Google's list price as recalled from its pricing page; NOT verified against the live page "
    "(this repository is built without web access): check it and override with --prices";
// Spot prices could not be retrieved at all: 40% of on-demand is an ESTIMATE (Google advertises
// large but varying Spot discounts). Override them for real decisions.
constexpr double kSpotEstimate = 0.4;
constexpr const char* kSpotSource = "estimate: 40% of the on-demand price";

ChipPrice Recalled(Generation g, double on_demand, const char* region, std::string note) {
  return {g,
          on_demand,
          on_demand * kSpotEstimate,
          region,
          kPricingPage,
          kSpotSource,
          "unverified",
          false,
          false,
          std::move(note)};
}

std::string GenerationList() { return "v2, v3, v4, v5e, v5p or v6e"; }

}  // namespace

PriceTable PriceTable::Default() {
  PriceTable t;
  // v2 and v3 are priced per device (v2-8, v3-8: 4 chips each).
  t.prices_[static_cast<size_t>(Generation::kV2)] =
      Recalled(Generation::kV2, 1.125, "us-central1",
               std::string("v2-8 at $4.50/hour over 4 chips. ") + kRecalled);
  t.prices_[static_cast<size_t>(Generation::kV3)] =
      Recalled(Generation::kV3, 2.00, "us-central1",
               std::string("v3-8 at $8.00/hour over 4 chips. ") + kRecalled);
  t.prices_[static_cast<size_t>(Generation::kV4)] = {
      Generation::kV4,
      3.22,
      3.22 * kSpotEstimate,
      "us-central2",
      kV4Quote,
      kSpotSource,
      "2022-08-11",
      false,
      false,
      "on-demand: Google's pricing page as quoted by a third party (infer-pub.com), not read "
      "from the page itself"};
  t.prices_[static_cast<size_t>(Generation::kV5e)] =
      Recalled(Generation::kV5e, 1.20, "us-west4", kRecalled);
  t.prices_[static_cast<size_t>(Generation::kV5p)] =
      Recalled(Generation::kV5p, 4.20, "us-east5", kRecalled);
  t.prices_[static_cast<size_t>(Generation::kV6e)] =
      Recalled(Generation::kV6e, 2.70, "us-east5", kRecalled);
  return t;
}

Status PriceTable::Merge(const json& document) {
  if (!document.is_object() || !document.contains("prices") || !document["prices"].is_array()) {
    return Status::InvalidArgument("prices: expected {\"prices\": [{\"generation\": ...}, ...]}");
  }
  PriceTable merged = *this;
  int index = 0;
  for (const json& entry : document["prices"]) {
    const std::string at = "prices[" + std::to_string(index++) + "]";
    if (!entry.is_object() || !entry.contains("generation") || !entry["generation"].is_string()) {
      return Status::InvalidArgument(at + ".generation is required (" + GenerationList() + ")");
    }
    Result<Generation> g = ParseGeneration(entry["generation"].get<std::string>());
    if (!g.ok()) return Status::InvalidArgument(at + ".generation: " + g.status().message());
    ChipPrice& p = merged.prices_[static_cast<size_t>(*g)];
    std::string source = "override";
    if (entry.contains("source")) {
      if (!entry["source"].is_string()) return Status::InvalidArgument(at + ".source: a string");
      source = entry["source"].get<std::string>();
    }
    bool from_page = false;
    if (entry.contains("fromPricingPage")) {
      if (!entry["fromPricingPage"].is_boolean()) {
        return Status::InvalidArgument(at + ".fromPricingPage must be true or false");
      }
      from_page = entry["fromPricingPage"].get<bool>();
    }
    for (const char* key : {"onDemand", "spot"}) {
      if (!entry.contains(key)) continue;
      const json& v = entry[key];
      if (!v.is_number() || v.get<double>() < 0 || v.get<double>() > 1e6) {
        return Status::InvalidArgument(at + "." + key +
                                       " must be a price in USD per chip-hour (0..1e6)");
      }
      const bool on_demand = std::string_view(key) == "onDemand";
      (on_demand ? p.on_demand_usd_per_chip_hour : p.spot_usd_per_chip_hour) = v.get<double>();
      (on_demand ? p.on_demand_source : p.spot_source) = source;
      (on_demand ? p.on_demand_from_pricing_page : p.spot_from_pricing_page) = from_page;
      p.note = "overridden";
    }
    for (const auto& [key, field] : {std::pair{"region", &p.region}, {"asOf", &p.as_of}}) {
      if (!entry.contains(key)) continue;
      if (!entry[key].is_string()) return Status::InvalidArgument(at + "." + key + ": a string");
      *field = entry[key].get<std::string>();
    }
    for (const auto& [key, value] : entry.items()) {
      if (key != "generation" && key != "onDemand" && key != "spot" && key != "region" &&
          key != "asOf" && key != "source" && key != "fromPricingPage") {
        return Status::InvalidArgument(at + "." + key +
                                       " is not a known field (generation, onDemand, spot, "
                                       "region, asOf, source, fromPricingPage)");
      }
    }
  }
  *this = std::move(merged);
  return Status::Ok();
}

json PriceTable::ToJson() const {
  json prices = json::array();
  for (const ChipPrice& p : prices_) {
    prices.push_back({{"generation", std::string(Spec(p.generation).name)},
                      {"onDemand", p.on_demand_usd_per_chip_hour},
                      {"spot", p.spot_usd_per_chip_hour},
                      {"region", p.region},
                      {"onDemandSource", p.on_demand_source},
                      {"spotSource", p.spot_source},
                      {"asOf", p.as_of},
                      {"onDemandFromPricingPage", p.on_demand_from_pricing_page},
                      {"spotFromPricingPage", p.spot_from_pricing_page},
                      {"note", p.note}});
  }
  return {{"unit", "USD per chip-hour"}, {"prices", prices}};
}

}  // namespace tpuemu::engine::cost
