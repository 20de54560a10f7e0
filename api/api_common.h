// Helpers shared by the resource handlers: the one checked JSON body parser, page parameters, enum
// encoding, JSON replies.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/http_types.h"
#include "base/status.h"
#include "service/common/page_token.h"

namespace tpuemu::api {

// Limits on a JSON request body, checked by a scan of the text BEFORE nlohmann parses it (its
// parser recurses, and every value costs tens of bytes of memory).
struct JsonLimits {
  int max_depth = 64;                 // nesting of objects/arrays
  std::size_t max_bytes = 64u << 20;  // text size (the HTTP body limit is usually lower)
  std::size_t max_values = 1u << 22;  // array elements + object members, all levels together
};
inline constexpr int kMaxJsonDepth = JsonLimits{}.max_depth;

// Every request body the API reads goes through here. "" (or only whitespace) is an empty object.
// INVALID_ARGUMENT "Invalid JSON payload received. …" naming the broken limit on malformed JSON,
// a depth, size or value count over `limits`, or a non-object top level.
Result<nlohmann::json> ParseBody(const std::string& body, const JsonLimits& limits = {});
// ParseBody for a Cloud TPU API message: snake_case field names are accepted too, as Google's
// JSON parser accepts them (proto_json.h NormalizeFieldNames).
Result<nlohmann::json> ParseApiBody(const std::string& body);
// A `repeated string` member of a request body (absent = empty); INVALID_ARGUMENT naming
// `proto_name` ("worker_ids") when it is not a list of strings.
Result<std::vector<std::string>> BodyStringList(const nlohmann::json& body, const char* key,
                                                const char* proto_name);
// A boolean query parameter (`force=true`; gcloud sends "True"): true/1 or false/0 in any case,
// absent = `fallback`. INVALID_ARGUMENT naming it otherwise.
Result<bool> QueryBool(const HttpRequest& req, std::string_view key, bool fallback = false);

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
