// Helpers shared by the resource handlers: page parameters, enum encoding, JSON replies.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "api/http_types.h"
#include "engine/status.h"
#include "service/node_manager.h"

namespace tpuemu::api {

// `$alt=json;enum-encoding=int` (sent by @google-cloud/tpu): enums as numbers in responses.
bool WantsIntEnums(const HttpRequest& req);
// pageSize / pageToken (AIP-158): a non-integer or negative pageSize is INVALID_ARGUMENT.
Result<service::PageRequest> ParsePage(const HttpRequest& req);
// 200 with the JSON body, or Google's error envelope for the Status.
HttpResponse Reply(const Result<nlohmann::json>& result);
HttpResponse ReplyStatus(const Status& status);  // {} on OK
// "projects/{project}/locations/{location}" from path params.
std::string ParentName(const PathParams& params);

}  // namespace tpuemu::api
