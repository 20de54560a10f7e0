// Defaults for tpuctl run inside a TPU VM worker, from the worker's metadata server (README "SSH
// into a TPU VM"): the API endpoint (instance/attributes/tpuemu-api-endpoint), the project
// (project/project-id), the zone (the last segment of instance/zone) and the node (NODE_ID of
// instance/attributes/tpu-env). Every request carries `Metadata-Flavor: Google` and has a short
// timeout; an unreachable server or a missing value leaves that field empty (never an error).
//
// The server is asked only where one is known to exist: GCE_METADATA_HOST ("HOST[:PORT]", set in
// worker sessions, as on Google's VMs), else the address /etc/hosts gives
// metadata.google.internal (a worker's /etc/hosts has it). Elsewhere nothing is asked and
// nothing is waited for. Not thread-safe.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "cli/tpuctl/http_client.h"

namespace tpuemu::cli {

inline constexpr const char* kMetadataHostName = "metadata.google.internal";
inline constexpr std::chrono::milliseconds kMetadataTimeout{300};

struct MetadataDefaults {
  std::string api_endpoint;
  std::string project;
  std::string zone;
  std::string node;
};

// Where the metadata server is, from GCE_METADATA_HOST's value (nullptr/"" = unset) and the text
// of /etc/hosts; nullopt when neither names it.
std::optional<Endpoint> MetadataServerEndpoint(const char* gce_metadata_host,
                                               const std::string& etc_hosts);

// The value of `key` in tpu-env's YAML-ish lines ("NODE_ID: 'n1'"); "" when absent.
std::string TpuEnvValue(const std::string& tpu_env, const std::string& key);

// Asks `server` for the four values (stops at the first transport failure).
MetadataDefaults FetchMetadataDefaults(const Endpoint& server,
                                       std::chrono::milliseconds timeout = kMetadataTimeout);

// This process's defaults: found (GCE_METADATA_HOST, /etc/hosts) and fetched on the first Get(),
// then kept.
class MetadataLookup {
 public:
  const MetadataDefaults& Get();

 private:
  std::optional<MetadataDefaults> defaults_;
};

}  // namespace tpuemu::cli
