// The comparison as tpuemud serves it (POST|GET /_emulator/compare): engine/cost's request and
// report formats, plus the one source only the service has — the built-in workloads
// (service/workloads), priced from the graph they build for a job.
//
// A {"workload": {"mlp": {...}}} request is read with ParseJobSpec (the same fields and limits
// as a job's workload), built at its full batch on one core, and priced by
// engine::cost::FiguresFromGraph with the workload's own gradient bytes; a transformer workload
// counts tokens (batch x seqLen), the others samples. Stateless: thread-safe.
#pragma once

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "engine/cost/step_profile.h"

namespace tpuemu::service {

// INVALID_ARGUMENT naming the field ("workload.mlp.layers must be 1..64").
Result<engine::cost::StepProfile> PriceWorkload(const nlohmann::json& workload);

// The whole request (engine/cost/compare_request.h) to the report (engine/cost/compare_report.h).
Result<nlohmann::ordered_json> CompareTpus(const nlohmann::json& request);

}  // namespace tpuemu::service
