// nodes.getGuestAttributes: what the guest agent of each of a node's workers publishes (its SSH
// host key, which gcloud's ssh reads for known_hosts, and its hostname), derived from the node's
// uid so it is stable across restarts. Pure function, thread-safe.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "service/nodes/node.h"

namespace tpuemu::service {

// {"guestAttributes": [{queryPath, queryValue: {items: [{namespace, key, value}]}, workerId}]},
// one entry per worker in `worker_ids` (decimal; every worker when empty), with the items whose
// "namespace/key" starts with `query_path`. INVALID_ARGUMENT naming 'workerIds' and the node's
// worker range for an id that is not one of its workers.
// `host_key(w)`, when given and non-empty for a worker, is that worker's real SSH host key (a
// sandboxed worker's, service/workers/); else a stable made-up one.
Result<nlohmann::json> RenderGuestAttributes(
    const Node& node, const std::string& query_path, const std::vector<std::string>& worker_ids,
    const std::function<std::string(int worker)>& host_key = nullptr);

}  // namespace tpuemu::service
