// The comparison request, as JSON: the one format behind `tpuemu-engine compare` (which builds it
// from its flags) and POST /_emulator/compare (its body; GET takes the same fields flat in the
// query string), so the CLI and the endpoint cannot disagree on what a request means.
//
//   {"model": {...transformer_model.h...},      exactly one of model, program, hlo, workload
//    "program": {...engine/frontend/program_json.h...},
//    "hlo": {"text": "HloModule ...", "allowUnsupported": false},   (program_profile.h:
//                                                FiguresFromHloModule)
//    "batch": 64,                                a program's or HLO module's batch (optional)
//    "workload": {...JobSpec workload...},       tpuemud only (built-in workloads: service/)
//    "acceleratorTypes": ["v5e", "v5p-128"],     default: every type
//    "strategy": "auto" | "dp" | "fsdp" | "tp",  default auto: the fastest that fits
//    "tp": 4,                                    with strategy tp; default: try 2, 4, 8, 16
//    "remat": "auto" | "none" | "minimal" | "full",   model only; default auto
//    "prices": {"prices": [...price_table.h...]},     overrides the built-in price table
//    "detail": false}                            true: every plan evaluated, per type
// Query form: preset, layers, dModel, heads, kvHeads, headDim, ffn, vocab, seqLen, globalBatch,
// gatedMlp (the model's fields), acceleratorTypes (comma-separated), strategy, tp, remat, detail.
// Errors: INVALID_ARGUMENT naming the field. Stateless: thread-safe.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "engine/cost/compare.h"

namespace tpuemu::engine::cost {

struct CompareRequest {
  CompareSource source;
  CompareOptions options;
};

// Prices a built-in workload ({"mlp": {...}}); only tpuemud has one (service/compare/).
using WorkloadPricer = std::function<Result<StepProfile>(const nlohmann::json& workload)>;

Result<CompareRequest> ParseCompareRequest(const nlohmann::json& body,
                                           const WorkloadPricer& workloads = nullptr);

// The query-string form as the equivalent JSON body; INVALID_ARGUMENT for a malformed number or an
// unknown key.
Result<nlohmann::json> CompareQueryToJson(
    const std::vector<std::pair<std::string, std::string>>& query);

}  // namespace tpuemu::engine::cost
