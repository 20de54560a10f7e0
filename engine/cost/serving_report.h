// The serving part of a Comparison (CompareOptions::serving) as JSON (each row's "serving"),
// CSV columns appended to the training ones, and an aligned text table printed under the
// training table. Units: bytes, seconds, tokens per second per chip, USD. Stateless: thread-safe.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "engine/cost/compare.h"

namespace tpuemu::engine::cost {

nlohmann::ordered_json ServingJson(const ServingEstimate& serving);
std::string ServingCsvHeader();
std::string ServingCsvCells(const ServingEstimate& serving);
std::string ServingTable(const Comparison& comparison);

}  // namespace tpuemu::engine::cost
