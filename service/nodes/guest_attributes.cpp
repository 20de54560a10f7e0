#include "service/nodes/guest_attributes.h"

#include "service/workers/guest_metadata.h"

#include <charconv>
#include <functional>

namespace tpuemu::service {

using nlohmann::json;

Result<json> RenderGuestAttributes(const Node& node, const std::string& query_path,
                                   const std::vector<std::string>& worker_ids,
                                   const std::function<std::string(int worker)>& host_key) {
  std::vector<int> workers;
  if (worker_ids.empty()) {
    for (int w = 0; w < node.type.workers; ++w) workers.push_back(w);
  } else {
    for (const std::string& id : worker_ids) {
      int w = -1;
      auto [end, ec] = std::from_chars(id.data(), id.data() + id.size(), w);
      if (ec != std::errc() || end != id.data() + id.size() || w < 0 || w >= node.type.workers) {
        return Status::InvalidArgument("Invalid value for field 'workerIds': '" + id + "'; node '" +
                                       node.key.Name() + "' has workers 0.." +
                                       std::to_string(node.type.workers - 1));
      }
      workers.push_back(w);
    }
  }
  json out = json::array();
  for (int w : workers) {
    // What the guest agent publishes: host keys, which gcloud ssh reads for known_hosts.
    std::string key = host_key ? host_key(w) : std::string();
    if (key.empty()) {
      key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI" +
            std::to_string(std::hash<std::string>{}(node.uid + "/" + std::to_string(w)));
    }
    json items = json::array({
        {{"namespace", "hostkeys"}, {"key", "ssh-ed25519"}, {"value", key}},
        {{"namespace", "guestInventory"}, {"key", "Hostname"}, {"value", WorkerHostname(node, w)}},
    });
    json matching = json::array();
    for (const json& item : items) {
      std::string path =
          item["namespace"].get<std::string>() + "/" + item["key"].get<std::string>();
      if (query_path.empty() || path.rfind(query_path, 0) == 0) matching.push_back(item);
    }
    out.push_back({{"queryPath", query_path},
                   {"queryValue", {{"items", matching}}},
                   {"workerId", std::to_string(w)}});
  }
  return json{{"guestAttributes", out}};
}

}  // namespace tpuemu::service
