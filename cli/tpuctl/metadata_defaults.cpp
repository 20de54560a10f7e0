#include "cli/tpuctl/metadata_defaults.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace tpuemu::cli {
namespace {

std::string TrimBlanks(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

}  // namespace

std::optional<Endpoint> MetadataServerEndpoint(const char* gce_metadata_host,
                                               const std::string& etc_hosts) {
  std::string host;
  if (gce_metadata_host != nullptr && *gce_metadata_host != '\0') {
    host = gce_metadata_host;
  } else {
    std::istringstream lines(etc_hosts);
    for (std::string line; std::getline(lines, line) && host.empty();) {
      line = line.substr(0, line.find('#'));
      std::istringstream words(line);
      std::string address, name;
      if (!(words >> address)) continue;
      while (words >> name) {
        if (name == kMetadataHostName) {
          host = address;
          break;
        }
      }
    }
  }
  if (host.empty()) return std::nullopt;
  Result<Endpoint> endpoint = Endpoint::Parse("http://" + host);
  if (!endpoint.ok()) return std::nullopt;
  return *endpoint;
}

std::string TpuEnvValue(const std::string& tpu_env, const std::string& key) {
  std::istringstream lines(tpu_env);
  for (std::string line; std::getline(lines, line);) {
    size_t colon = line.find(':');
    if (colon == std::string::npos || TrimBlanks(line.substr(0, colon)) != key) continue;
    std::string value = TrimBlanks(line.substr(colon + 1));
    if (value.size() >= 2 && (value.front() == '\'' || value.front() == '"') &&
        value.back() == value.front()) {
      value = value.substr(1, value.size() - 2);
    }
    return value;
  }
  return "";
}

MetadataDefaults FetchMetadataDefaults(const Endpoint& server, std::chrono::milliseconds timeout) {
  MetadataDefaults d;
  HttpClient http(server, timeout, "tpuctl");
  bool reachable = true;
  auto get = [&](const std::string& path) -> std::string {
    if (!reachable) return "";
    Result<HttpReply> reply =
        http.Request("GET", "/computeMetadata/v1/" + path, "", timeout,
                     {{"Metadata-Flavor", "Google"}, {"Accept", "text/plain"}});
    if (!reply.ok()) {
      reachable = false;
      return "";
    }
    return reply->status == 200 ? TrimBlanks(reply->body) : "";
  };
  d.api_endpoint = get("instance/attributes/tpuemu-api-endpoint");
  d.project = get("project/project-id");
  std::string zone = get("instance/zone");  // "projects/NUM/zones/Z"
  d.zone = zone.substr(zone.find_last_of('/') + 1);
  d.node = TpuEnvValue(get("instance/attributes/tpu-env"), "NODE_ID");
  return d;
}

const MetadataDefaults& MetadataLookup::Get() {
  if (defaults_) return *defaults_;
  std::ifstream in("/etc/hosts");
  std::stringstream hosts;
  hosts << in.rdbuf();
  std::optional<Endpoint> server =
      MetadataServerEndpoint(std::getenv("GCE_METADATA_HOST"), hosts.str());
  defaults_ = server ? FetchMetadataDefaults(*server) : MetadataDefaults{};
  return *defaults_;
}

}  // namespace tpuemu::cli
