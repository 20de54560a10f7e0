// JSON codecs for the Node resource on the wire: request decoding with Google-style type errors,
// and the `$alt=json;enum-encoding=int` form (enums as numbers) that @google-cloud/tpu asks for.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "service/nodes/node.h"

namespace tpuemu::api {

// Request bodies are parsed by ParseBody (api/api_common.h), the one checked JSON parser.

// A Node body (nodes.create, nodes.patch) -> NodeSpec. Every known field is type-checked and a
// wrong type is INVALID_ARGUMENT naming it ("Invalid value at 'node.labels' (map<string, string>),
// 5"); unknown fields are ignored, as Google does. Enums may be names or numbers.
Result<service::NodeSpec> DecodeNode(const nlohmann::json& body);

// Rewrites enum names to their numbers in a rendered Node (state, health, apiVersion,
// acceleratorConfig.type, dataDisks[].mode, symptoms[].symptomType).
void NodeEnumsToInt(nlohmann::json& node);
// The reverse, for a Node as a client sent it (echoed back inside a QueuedResource): numbers in
// acceleratorConfig.type and dataDisks[].mode become names.
void NodeEnumsToNames(nlohmann::json& node);
// The same inside an Operation's response when it is a Node.
void OperationEnumsToInt(nlohmann::json& operation);

// "a.b,c_d" -> {"a.b", "c_d"} (spaces trimmed, empties dropped).
std::vector<std::string> SplitMask(const std::string& mask);

}  // namespace tpuemu::api
