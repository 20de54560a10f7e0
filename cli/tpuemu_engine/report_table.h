// Renders a tpuemu-engine report: an ordered JSON object whose scalars print as aligned
// "key  value" lines and whose arrays of objects (per-op rows) print as column tables after them.
// Pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace tpuemu::cli {

// Integers as integers, floats with 6 significant digits, strings bare.
std::string FormatNumber(const nlohmann::ordered_json& v);
std::string RenderTable(const nlohmann::ordered_json& report);

}  // namespace tpuemu::cli
