// What a worker of a TPU VM sees of itself: its metadata server tree (the paths JAX, torch_xla,
// TensorFlow and Ray read; reference: README "Inside a TPU VM"), its host name, the tpu-env
// block and the environment its login shells get. Computed from the node every time, never
// stored: a patch, a preemption or a maintenance event shows on the next read. Pure functions,
// thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "service/nodes/node.h"

namespace tpuemu::service {

// The project as Compute Engine shows it (service/projects/project_metadata.h).
struct ProjectInfo {
  std::string project_id;
  std::string numeric_id;  // ProjectNumber(project_id)
  // commonInstanceMetadata.items: [{"key", "value"}]
  nlohmann::json items = nlohmann::json::array();
};

// The node's slice in a multislice queued resource (MEGASCALE_* in tpu-env).
struct SliceInfo {
  int slice_id = 0;
  int num_slices = 1;
  std::string coordinator_address;  // worker 0 of slice 0, "ip:8080"
};

// Where a sandboxed worker reaches tpuemud: the metadata server at the address Google's has,
// and the TPU API for its own project (api/worker_api.h) beside it, both on its slice's network.
inline constexpr char kMetadataServerIp[] = "169.254.169.254";
inline constexpr uint16_t kWorkerApiPort = 8470;
inline constexpr char kWorkerApiEndpoint[] = "http://169.254.169.254:8470";

struct GuestContext {
  std::string api_endpoint;  // tpuemud's TPU API as the worker reaches it ("http://127.0.0.1:8470")
  std::optional<SliceInfo> slice;  // set for a node of a multislice request
};

// A stable 12-digit project number for a project id (Compute Engine's `id`, the metadata
// server's numeric-project-id).
std::string ProjectNumber(const std::string& project_id);
// Google's worker host name: "t1v-n-<8 hex of the node id>-w-<worker>".
std::string WorkerHostname(const Node& node, int worker);
// "host:id:ip" per worker, comma-separated, in worker order (JAX and torch_xla read the ip).
std::string WorkerNetworkEndpoints(const Node& node);
// The `tpu-env` attribute: "KEY: 'value'" lines.
std::string TpuEnv(const Node& node, int worker, const GuestContext& context);
// The environment of every session on the worker (TPU_WORKER_ID, TPU_WORKER_HOSTNAMES,
// TPU_ACCELERATOR_TYPE, …, GCE_METADATA_HOST, TPUEMU_ENDPOINT …).
std::vector<std::pair<std::string, std::string>> WorkerEnvironment(const Node& node, int worker,
                                                                   const GuestContext& context);

// The whole tree of worker `worker`: {"instance": {...}, "project": {...}}. A string is a value,
// an object a directory (attribute keys as given, other names as the server spells them in
// paths: "network-interfaces", "numeric-project-id"). The service account's token is not in the
// tree: api/ mints it per request.
nlohmann::json GuestMetadataTree(const Node& node, int worker, const ProjectInfo& project,
                                 const GuestContext& context);

}  // namespace tpuemu::service
