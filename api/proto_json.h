// Proto3 JSON details the API layer handles once for every resource.
//
// Field names: Google's JSON parser accepts both the lowerCamelCase JSON names and the proto
// field names in snake_case, for every message (axlearn sends `node_spec`, `multi_node_params`,
// `node_id`). NormalizeFieldNames rewrites snake_case keys to lowerCamelCase, recursively, except
// inside map fields, whose keys are data (`labels`, `metadata`).
//
// API versions: one Operation or resource renders the same in v2 and v2alpha1 but for the
// package in its type URLs and a few v2alpha1 spellings (multisliceParams is multiNodeParams
// there). ForVersion rewrites a rendered v2 body for the version a request came in on.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace tpuemu::api {

enum class ApiVersion { kV1, kV2, kV2Alpha1 };
std::string_view ApiVersionName(ApiVersion version);  // "v1", "v2", "v2alpha1"

// "node_id" -> "nodeId"; keys without '_' are unchanged. When both spellings are present the
// lowerCamelCase one wins.
void NormalizeFieldNames(nlohmann::json& value);
std::string SnakeToCamel(std::string_view name);

// Rewrites every "type.googleapis.com/google.cloud.tpu.v2.X" to the version's package, the
// Operation metadata's apiVersion, and (v2alpha1) multisliceParams -> multiNodeParams. No-op for
// v2.
void ForVersion(ApiVersion version, nlohmann::json& body);

}  // namespace tpuemu::api
