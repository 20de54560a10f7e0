#include "service/workers/guest_metadata.h"

#include <array>
#include <cstdint>
#include <cstdio>
#include <sstream>

namespace tpuemu::service {
namespace {

using nlohmann::json;

uint32_t Fnv1a(const std::string& s) {
  uint32_t h = 2166136261u;
  for (unsigned char c : s) {
    h ^= c;
    h *= 16777619u;
  }
  return h;
}

// "2x2x4" -> {2, 2, 4}; 2D topologies get z = 1.
std::array<int, 3> Dims(const std::string& topology) {
  std::array<int, 3> d = {1, 1, 1};
  size_t i = 0;
  std::stringstream in(topology);
  std::string part;
  while (i < 3 && std::getline(in, part, 'x')) d[i++] = std::max(1, std::atoi(part.c_str()));
  return d;
}

std::string Joined(const std::array<int, 3>& d) {
  return std::to_string(d[0]) + "," + std::to_string(d[1]) + "," + std::to_string(d[2]);
}

// Chips of one host as a box, and the hosts as a box of those (what libtpu reads to build the
// mesh): 4 chips a host are 2x2x1, 8 are 2x4x1.
std::pair<std::array<int, 3>, std::array<int, 3>> Bounds(const Node& node) {
  const int workers = std::max(1, node.type.workers);
  const int per_host = std::max(1, node.type.chips / workers);
  std::array<int, 3> chips = {1, 1, 1};
  if (per_host == 2) chips = {1, 2, 1};
  if (per_host == 4) chips = {2, 2, 1};
  if (per_host == 8) chips = {2, 4, 1};
  std::array<int, 3> dims = Dims(node.type.topology);
  std::array<int, 3> hosts = {1, 1, 1};
  for (int i = 0; i < 3; ++i) {
    if (dims[i] % chips[i] != 0) return {chips, {1, 1, workers}};
    hosts[i] = dims[i] / chips[i];
  }
  if (hosts[0] * hosts[1] * hosts[2] != workers) return {chips, {1, 1, workers}};
  return {chips, hosts};
}

std::string Attribute(const json& metadata, const std::string& key) {
  if (!metadata.is_object()) return "";
  auto it = metadata.find(key);
  return it != metadata.end() && it->is_string() ? it->get<std::string>() : "";
}

}  // namespace

std::string ProjectNumber(const std::string& project_id) {
  uint64_t n = (static_cast<uint64_t>(Fnv1a(project_id)) << 8) ^ Fnv1a("n/" + project_id);
  return std::to_string(100000000000ull + n % 900000000000ull);
}

std::string WorkerHostname(const Node& node, int worker) {
  char hex[9];
  std::snprintf(hex, sizeof hex, "%08x", Fnv1a(node.uid));
  return "t1v-n-" + std::string(hex) + "-w-" + std::to_string(worker);
}

std::string WorkerNetworkEndpoints(const Node& node) {
  std::string out;
  for (int w = 0; w < node.type.workers; ++w) {
    if (w) out += ",";
    // The middle field is the worker's instance id on a real VM; the uid plus the index here.
    out += WorkerHostname(node, w) + ":" + node.uid + std::to_string(w) + ":" +
           WorkerIpAddress(node, w);
  }
  return out;
}

std::string TpuEnv(const Node& node, int worker, const GuestContext& context) {
  auto [chips, hosts] = Bounds(node);
  std::string out;
  auto line = [&out](const std::string& key, const std::string& value) {
    out += key + ": '" + value + "'\n";
  };
  line("ACCELERATOR_TYPE", node.type.name);
  line("CHIPS_PER_HOST_BOUNDS", Joined(chips));
  line("HOST_BOUNDS", Joined(hosts));
  line("NODE_ID", node.key.node_id);
  line("TOPOLOGY", node.type.topology);
  line("TPU_CHIPS_PER_PROCESS_BOUNDS", Joined(chips));
  line("TPU_PROCESS_BOUNDS", Joined(hosts));
  line("WORKER_ID", std::to_string(worker));
  line("ZONE", node.key.zone);
  if (context.slice) {
    line("MEGASCALE_COORDINATOR_ADDRESS", context.slice->coordinator_address);
    line("MEGASCALE_NUM_SLICES", std::to_string(context.slice->num_slices));
    line("MEGASCALE_PORT", "8080");
    line("MEGASCALE_SLICE_ID", std::to_string(context.slice->slice_id));
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> WorkerEnvironment(const Node& node, int worker,
                                                                   const GuestContext& context) {
  auto [chips, hosts] = Bounds(node);
  std::string hostnames;
  for (int w = 0; w < node.type.workers; ++w) {
    hostnames += (w ? "," : "") + WorkerIpAddress(node, w);
  }
  const std::string metadata_ip = kMetadataServerIp;
  std::vector<std::pair<std::string, std::string>> env = {
      {"TPU_ACCELERATOR_TYPE", node.type.name},
      {"TPU_WORKER_ID", std::to_string(worker)},
      {"TPU_WORKER_HOSTNAMES", hostnames},
      {"TPU_CHIPS_PER_HOST_BOUNDS", Joined(chips)},
      {"TPU_HOST_BOUNDS", Joined(hosts)},
      {"TPU_CHIPS_PER_PROCESS_BOUNDS", Joined(chips)},
      {"TPU_PROCESS_BOUNDS", Joined(hosts)},
      {"CLOUD_TPU_TASK_ID", std::to_string(worker)},
      {"TPU_NAME", node.key.node_id},
      {"GCE_METADATA_HOST", metadata_ip},
      {"GCE_METADATA_IP", metadata_ip},
      {"TPUEMU_ENDPOINT", context.api_endpoint},
      // gcloud on the worker talks to this emulator too.
      {"CLOUDSDK_API_ENDPOINT_OVERRIDES_TPU", context.api_endpoint + "/"},
      {"CLOUDSDK_CORE_PROJECT", node.key.project},
      {"CLOUDSDK_COMPUTE_ZONE", node.key.zone},
  };
  if (context.slice) {
    env.emplace_back("MEGASCALE_COORDINATOR_ADDRESS", context.slice->coordinator_address);
    env.emplace_back("MEGASCALE_NUM_SLICES", std::to_string(context.slice->num_slices));
    env.emplace_back("MEGASCALE_SLICE_ID", std::to_string(context.slice->slice_id));
  }
  return env;
}

json GuestMetadataTree(const Node& node, int worker, const ProjectInfo& project,
                       const GuestContext& context) {
  const json metadata = node.fields.value("metadata", json::object());
  json attributes = json::object();
  if (metadata.is_object()) {
    for (auto it = metadata.begin(); it != metadata.end(); ++it) {
      if (it->is_string()) attributes[it.key()] = it->get<std::string>();
    }
  }
  // The TPU runtime's own keys (set by the TPU service on a real VM, over any user key).
  attributes["accelerator-type"] = node.type.name;
  attributes["agent-worker-number"] = std::to_string(worker);
  attributes["instance-id"] = node.uid + std::to_string(worker);
  attributes["tpu-env"] = TpuEnv(node, worker, context);
  attributes["worker-network-endpoints"] = WorkerNetworkEndpoints(node);
  attributes["runtime-version"] = node.runtime_version;
  attributes["tpuemu-api-endpoint"] = context.api_endpoint;

  const std::string hostname = WorkerHostname(node, worker);
  const std::string ip = WorkerIpAddress(node, worker);
  std::string maintenance = "NONE";
  if (node.UnderMaintenance()) maintenance = "TERMINATE_ON_HOST_MAINTENANCE";
  const bool preempted = node.state == NodeState::kPreempted;
  const json scheduling = node.fields.value("schedulingConfig", json::object());
  const bool spot = node.Preemptible();
  std::string account = "default";
  std::string email = project.numeric_id + "-compute@developer.gserviceaccount.com";
  if (const json sa = node.fields.value("serviceAccount", json::object());
      sa.is_object() && sa.contains("email") && sa["email"].is_string()) {
    email = sa["email"].get<std::string>();
  }
  json service_account = {{"aliases", "default"},
                          {"email", email},
                          {"scopes", "https://www.googleapis.com/auth/cloud-platform"}};

  json instance = {
      {"attributes", attributes},
      {"hostname", hostname + "." + node.key.zone + ".c." + project.project_id + ".internal"},
      {"id", node.uid + std::to_string(worker)},
      {"name", hostname},
      {"zone", "projects/" + project.numeric_id + "/zones/" + node.key.zone},
      {"machine-type", "projects/" + project.numeric_id + "/machineTypes/tpu-vm"},
      {"cpu-platform", "tpuemu"},
      {"description", Attribute(node.fields, "description")},
      {"maintenance-event", maintenance},
      {"preempted", preempted ? "TRUE" : "FALSE"},
      {"network-interfaces",
       {{"0",
         {{"ip", ip},
          {"network", "projects/" + project.numeric_id + "/networks/default"},
          {"subnetmask", "255.255.255.0"},
          {"mac", "42:01:0a:00:00:0" + std::to_string(worker % 10)}}}}},
      {"scheduling",
       {{"preemptible", spot ? "TRUE" : "FALSE"},
        {"on-host-maintenance", "TERMINATE"},
        {"automatic-restart", spot ? "FALSE" : "TRUE"},
        {"provisioning-model", scheduling.value("spot", false) ? "SPOT" : "STANDARD"}}},
      {"service-accounts", {{"default", service_account}, {email, service_account}}},
      {"tags", ""},
  };
  json project_attributes = json::object();
  for (const json& item : project.items) {
    if (item.is_object() && item.contains("key") && item["key"].is_string()) {
      project_attributes[item["key"].get<std::string>()] = item.value("value", "");
    }
  }
  json project_tree = {{"attributes", project_attributes},
                       {"numeric-project-id", project.numeric_id},
                       {"project-id", project.project_id}};
  return {{"instance", instance}, {"project", project_tree}};
}

}  // namespace tpuemu::service
