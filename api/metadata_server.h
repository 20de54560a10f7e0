// The metadata server of one TPU VM worker (http://metadata.google.internal/computeMetadata/v1/
// as the worker resolves it: its own address, port 80), served by tpuemud's HTTP server on a
// listener of its own per worker (HttpServer::AddListener).
//
// As Google's: requests need `Metadata-Flavor: Google` (403 without it, or with
// X-Forwarded-For), replies carry it and an ETag; values are text, `?alt=json` JSON,
// `?recursive=true` a whole directory (JSON by default, names in camelCase outside attributes);
// `?wait_for_change=true` holds the request until the value's ETag differs from `last_etag`
// (or from the current one) or `timeout_sec` (default and most 60) passes; the default service
// account's token is a fake bearer token. Only GET. The tree is the worker's
// (service/workers/guest_metadata.h), read afresh on every request.
#pragma once

#include <string>

#include "api/http_types.h"
#include "service/common/scheduler.h"
#include "service/workers/worker_manager.h"

namespace tpuemu::api {

// The handler for worker `worker` of node `node_name`. `workers` and `scheduler` must outlive it
// (the scheduler re-checks waiting requests every 200 ms).
AsyncHandlerFn MetadataServerHandler(service::WorkerManager& workers, service::Scheduler& scheduler,
                                     std::string node_name, int worker);

// The response for one request, without waiting (tests): the tree, the request.
HttpResponse AnswerMetadata(const nlohmann::json& tree, const HttpRequest& request);

}  // namespace tpuemu::api
