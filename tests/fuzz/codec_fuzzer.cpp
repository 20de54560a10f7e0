// Fuzzes the Node JSON codecs (api/node_codec.h) as nodes.create and nodes.patch use them:
// bytes -> ParseBody -> DecodeNode -> the node rendered and re-encoded with int enums; and the
// updateMask splitter. Every outcome must be a value or a Status: no crash, leak, UB or throw.
#include <cstddef>
#include <cstdint>
#include <string>

#include "api/api_common.h"  // ParseBody (once the checked body parser moved there)
#include "api/node_codec.h"
#include "service/nodes/node.h"

using namespace tpuemu;  // NOLINT: a fuzz target's one job

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  (void)api::SplitMask(text);
  Result<nlohmann::json> body = api::ParseBody(text);
  if (!body.ok()) return 0;
  Result<service::NodeSpec> spec = api::DecodeNode(*body);
  if (!spec.ok()) return 0;
  // The decoded body re-rendered in the `$alt=json;enum-encoding=int` form, as the routes do for
  // a Node and for an Operation whose response is one.
  nlohmann::json node = *body;
  api::NodeEnumsToInt(node);
  nlohmann::json operation = {{"name", "operation-1"}, {"done", true}, {"response", *body}};
  operation["response"]["@type"] = "type.googleapis.com/google.cloud.tpu.v2.Node";
  api::OperationEnumsToInt(operation);
  (void)node.dump();
  (void)operation.dump();
  return 0;
}
