// The metadata server of TPU VM workers (http://metadata.google.internal/computeMetadata/v1/ as a
// worker resolves it: 169.254.169.254, port 80, on its slice's private network), served by
// tpuemud's HTTP server on a listener of its own per slice network (HttpServer::AddListener on a
// socket made in that network), which answers each worker from its own address.
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

// The handler for the workers of slice network `network` (WorkerManager's name for it): each
// request answers for the worker whose address on that network it comes from (403 for any other
// peer). `workers` and `scheduler` must outlive it (the scheduler re-checks waiting requests
// every 200 ms).
AsyncHandlerFn MetadataServerHandler(service::WorkerManager& workers, service::Scheduler& scheduler,
                                     std::string network);

// The response for one request, without waiting (tests): the tree, the request.
HttpResponse AnswerMetadata(const nlohmann::json& tree, const HttpRequest& request);

}  // namespace tpuemu::api
