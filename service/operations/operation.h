// A long-running Operation (AIP-151) as the service keeps it, and its v2 JSON rendering.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace tpuemu::service {

inline constexpr char kOperationMetadataType[] =
    "type.googleapis.com/google.cloud.tpu.v2.OperationMetadata";
inline constexpr char kNodeType[] = "type.googleapis.com/google.cloud.tpu.v2.Node";
inline constexpr char kEmptyType[] = "type.googleapis.com/google.protobuf.Empty";

struct Operation {
  std::string name;  // projects/{p}/locations/{zone}/operations/operation-…
  std::string project;
  std::string zone;
  std::string target;  // the node's resource name
  std::string verb;    // create, delete, start, stop, update
  std::string create_time;
  std::string end_time;  // empty until done
  bool done = false;
  bool cancel_requested = false;
  Status error;             // non-OK only when done with an error
  nlohmann::json response;  // with "@type"; null until done successfully
  int64_t seq = 0;
};

// {"name", "metadata": {"@type": …OperationMetadata, createTime, endTime, target, verb, apiVersion,
// cancelRequested}, "done", "response" | "error": {code (gRPC number), message}}.
nlohmann::json RenderOperation(const Operation& op);

// A new Operation, not done, acting on `target`: named
// projects/{project}/locations/{zone}/operations/{NewOperationId()}, created now.
Operation NewOperation(const std::string& project, const std::string& zone,
                       const std::string& target, std::string_view verb);
// Marks `op` done now with `response` (which carries its "@type").
void CompleteOperation(Operation& op, nlohmann::json response);
// Marks `op` done now with `error` (not OK).
void FailOperation(Operation& op, Status error);

// "operation-1712345678901-6155a0f1b2c3d-4e5f6a7b-8c9d0e1f": the common Google id pattern.
std::string NewOperationId();
// A 19-digit decimal id for Node.id.
std::string NewNodeUid();

}  // namespace tpuemu::service
