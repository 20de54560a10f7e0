// The GPU context rows (gpu_reference.h) as the comparison reports them: the JSON reply's
// "gpuReference" array and a text table printed under the TPU tables of `tpuemu-engine compare`.
// Both say, on every row, that the figures are outside the TPU model. Stateless: thread-safe.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/cost/gpu_reference.h"

namespace tpuemu::engine::cost {

// Every row marked "outsideTpuModel": true, with its sources.
nlohmann::ordered_json GpuReferenceJson(const std::vector<GpuReferenceRow>& rows);
// `unit` is the comparison's ("tokens", "samples"); empty rows give an empty string.
std::string GpuReferenceTable(const std::vector<GpuReferenceRow>& rows, const std::string& unit);

}  // namespace tpuemu::engine::cost
