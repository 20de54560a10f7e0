// A Comparison as JSON (the endpoint's reply and `tpuemu-engine compare --format json`), CSV
// (--format csv: one row per accelerator type, a header first) and an aligned text table (the
// CLI's default). JSON keys are camelCase; bytes are bytes, times seconds, money USD; numbers of
// a plan that cannot run are null (JSON) or empty (CSV). Stateless: thread-safe.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "engine/cost/compare.h"

namespace tpuemu::engine::cost {

nlohmann::ordered_json ComparisonToJson(const Comparison& comparison, const PriceTable& prices,
                                        const Efficiency& efficiency = kDefaultEfficiency);
std::string ComparisonToCsv(const Comparison& comparison);
std::string ComparisonToTable(const Comparison& comparison);

}  // namespace tpuemu::engine::cost
