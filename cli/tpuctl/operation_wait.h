// Waiting on a long-running Operation the way gcloud does: poll operations.get (GET /v2/{name})
// until `done`, with a progress line on a terminal ("Waiting for operation [..] to complete...
// done.") and nothing when stdout/stderr is not a TTY. Returns the Operation's `response`, or the
// Status of its `error` (numeric google.rpc code + message), or the API/transport error of a
// poll. Polls every 50 ms at first, backing off to 1 s.
#pragma once

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "cli/tpuctl/app.h"

namespace tpuemu::cli {

Result<nlohmann::json> WaitForOperation(Context& ctx, nlohmann::json operation);

}  // namespace tpuemu::cli
