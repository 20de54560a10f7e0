// The HLO of a job (GET .../jobs/J/hlo): a module an hlo job runs again.
//
//   {"hlo": {"text": "HloModule ...", "params": {"0": [...], ...}},   POST it back as a job's
//                                                                     "hlo" field
//    "parameters": ["w1", "x", ...],   the step's parameter (and constant) ids, in entry order
//    "outputs": ["loss", "grad_w1", ...],   the ids behind the result's out_0, out_1, ...
//    "valuesIncluded": true,           params hold every parameter's values
//    "note": "..."}                    what the module is, and what it leaves out
//
// An hlo job gives its own module and params back. A workload or program job gives its step —
// the graph one data-parallel shard runs, forward and backward — lowered to HLO
// (engine/frontend/from_graph.h); the SGD update between steps and the all-reduce of a multi-core
// job are not in it. Its values (the workload's weights and first shard's data, a program's
// init specs) are included when they total at most kMaxInlineHloValues elements, so a 1-step hlo
// job of that module computes the step's outputs again; larger jobs get the text alone (an hlo
// job then seeds the parameters itself). Stateless; thread-safe.
#pragma once

#include <cstdint>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "service/jobs/job_spec.h"

namespace tpuemu::service {

inline constexpr int64_t kMaxInlineHloValues = 16384;

// INVALID_ARGUMENT when the job's graph does not build; CANCELLED never (values are few).
Result<nlohmann::json> JobHlo(const JobSpec& spec);

}  // namespace tpuemu::service
