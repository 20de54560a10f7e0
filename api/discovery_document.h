// The Google API discovery document of the surface tpuemu serves (discovery format v1, as
// https://tpu.googleapis.com/$discovery/rest?version=v2 serves it), built from tpuemu's own
// method table and schemas — so discovery-based clients (googleapiclient, SkyPilot, Ray's
// autoscaler, axlearn, the `googleapis` npm package) can be aimed at tpuemu by their discovery
// URL alone: the document's rootUrl is the address the client used.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace tpuemu::api {

// `version` is "v2" or "v2alpha1" ("v2alpha", which Ray asks for, means v2alpha1); `root_url`
// ends with '/'. NOT_FOUND naming the version for any other.
Result<nlohmann::json> BuildDiscoveryDocument(const std::string& version,
                                              const std::string& root_url);

// The schema text of discovery_schemas.cpp.
const char* DiscoverySchemaText();

}  // namespace tpuemu::api
