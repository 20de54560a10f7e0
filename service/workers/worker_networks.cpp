// WorkerManager, its slices' private networks: one per node (per multislice queued resource),
// what tpuemud serves on it (the metadata server and the project's API endpoint), and which worker
// an address on it is.
#include <unistd.h>

#include "service/workers/guest_metadata.h"
#include "service/workers/worker_manager.h"

namespace tpuemu::service {

Result<std::shared_ptr<WorkerManager::Network>> WorkerManager::AcquireNetwork(const Node& node) {
  const std::string name = node.multislice_node && !node.queued_resource.empty()
                               ? "queuedResources/" + node.queued_resource
                               : node.key.Name();
  std::lock_guard lock(networks_mu_);
  if (std::shared_ptr<Network> running = networks_[name].lock()) return running;
  Result<std::unique_ptr<sandbox::SliceNetwork>> slice =
      sandbox::SliceNetwork::Create(options_.support, WorkerSubnet(node));
  if (!slice.ok()) return slice.status();
  Result<int> metadata = (*slice)->Listen(kMetadataServerIp, 80);
  if (!metadata.ok()) return metadata.status();
  Result<int> api = (*slice)->Listen(kMetadataServerIp, kWorkerApiPort);
  if (!api.ok()) {
    close(*metadata);
    return api.status();
  }
  if (hooks_.serve_network) {
    if (Status s = hooks_.serve_network(name, *metadata, *api, node.key.project); !s.ok()) {
      if (hooks_.unserve_network) hooks_.unserve_network(name);
      return s;
    }
  } else {
    close(*metadata);
    close(*api);
  }
  // The last node to let go of it stops serving it, then ends it.
  std::shared_ptr<Network> made(new Network{name, std::move(slice).value()},
                                [unserve = hooks_.unserve_network](Network* n) {
                                  if (unserve) unserve(n->name);
                                  delete n;
                                });
  networks_[name] = made;
  return made;
}

Result<std::pair<std::string, int>> WorkerManager::WorkerAt(const std::string& network,
                                                            const std::string& ip) const {
  std::lock_guard lock(mu_);
  for (const auto& [name, nw] : nodes_by_name_) {
    if (!nw->network || nw->network->name != network) continue;
    for (int w = 0; w < static_cast<int>(nw->workers.size()); ++w) {
      if (WorkerIpAddress(nw->node, w) == ip) return std::make_pair(name, w);
    }
  }
  return Status::NotFound("no worker of this network is at " + ip);
}

}  // namespace tpuemu::service
