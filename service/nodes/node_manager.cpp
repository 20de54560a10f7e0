#include "service/nodes/node_manager.h"

#include <algorithm>
#include <charconv>

#include "service/common/clock.h"
#include "service/common/validation.h"
#include "service/nodes/rows.h"

namespace tpuemu::service {
namespace {

using nlohmann::json;

constexpr int kDefaultPageSize = 100;
constexpr int kMaxPageSize = 1000;

Status NotFound(const std::string& name) {
  return Status::NotFound("Resource '" + name + "' was not found");
}

// Page tokens are opaque to clients; inside they are the seq of the last row served.
std::string EncodePageToken(int64_t seq) { return "s" + std::to_string(seq); }

Result<int64_t> DecodePageToken(const std::string& token) {
  if (token.empty()) return int64_t{0};
  int64_t seq = 0;
  auto [end, ec] = std::from_chars(token.data() + 1, token.data() + token.size(), seq);
  if (token[0] != 's' || ec != std::errc() || end != token.data() + token.size() || seq < 0) {
    return Status::InvalidArgument("Invalid value for field 'pageToken': '" + token + "'");
  }
  return seq;
}

int PageSize(const PageRequest& page) {
  if (page.page_size <= 0) return kDefaultPageSize;
  return std::min(page.page_size, kMaxPageSize);
}

// "networkConfig.enableExternalIps" -> "network_config.enable_external_ips".
std::string SnakeCase(const std::string& path) {
  std::string out;
  for (char c : path) {
    if (c >= 'A' && c <= 'Z') {
      out += '_';
      out += static_cast<char>(c - 'A' + 'a');
    } else {
      out += c;
    }
  }
  return out;
}

// Fills the defaults the real server fills and turns short network names into resource paths.
void Canonicalize(const NodeKey& key, const std::string& region, json& fields) {
  json& net = fields["networkConfig"];
  if (!net.is_object()) net = json::object();
  std::string network = net.value("network", "default");
  if (network.find('/') == std::string::npos) {
    network = "projects/" + key.project + "/global/networks/" + network;
  }
  std::string subnetwork = net.value("subnetwork", "default");
  if (subnetwork.find('/') == std::string::npos) {
    subnetwork = "projects/" + key.project + "/regions/" + region + "/subnetworks/" + subnetwork;
  }
  net["network"] = network;
  net["subnetwork"] = subnetwork;
  if (!net.contains("enableExternalIps")) net["enableExternalIps"] = false;

  json& account = fields["serviceAccount"];
  if (!account.is_object()) account = json::object();
  if (!account.contains("email")) {
    // A stable fake project number: 12 digits derived from the project id.
    uint64_t h = std::hash<std::string>{}(key.project) % 900000000000ull + 100000000000ull;
    account["email"] = std::to_string(h) + "-compute@developer.gserviceaccount.com";
  }
  if (!account.contains("scope")) {
    account["scope"] = json::array({"https://www.googleapis.com/auth/cloud-platform"});
  }
}

Status ValidateFields(const json& fields) {
  if (fields.contains("labels")) TPUEMU_RETURN_IF_ERROR(ValidateLabels(fields["labels"]));
  if (fields.contains("description")) {
    TPUEMU_RETURN_IF_ERROR(ValidateDescription(fields["description"].get<std::string>()));
  }
  return Status::Ok();
}

Operation NewOperation(const NodeKey& key, NodeVerb verb) {
  Operation op;
  op.project = key.project;
  op.zone = key.zone;
  op.name = key.Parent() + "/operations/" + NewOperationId();
  op.target = key.Name();
  op.verb = std::string(NodeVerbName(verb));
  op.create_time = NowRfc3339();
  return op;
}

}  // namespace

NodeManager::NodeManager(db::Store& store, Scheduler& scheduler, const Catalog& catalog,
                         NodeManagerOptions options)
    : store_(store),
      scheduler_(scheduler),
      catalog_(catalog),
      options_(options),
      nodes_(store),
      operations_(store),
      batcher_(store) {
  batcher_.SetBatchHooks([this] { cache_.BeginWrite(); }, [this] { cache_.EndWrite(); });
}

Status NodeManager::Recover() {
  TPUEMU_RETURN_IF_ERROR(ReseedZoneUsage());
  Result<std::vector<db::NodeRow>> pending = nodes_.ListPending();
  if (!pending.ok()) return pending.status();
  for (const db::NodeRow& row : *pending) {
    Schedule(row.name, row.pending_due_ms.value_or(0));
  }
  return Status::Ok();
}

Status NodeManager::ReseedZoneUsage() {
  std::map<std::string, int64_t> used;
  Status s = store_.Read([&](db::Txn& txn) -> Status {
    for (const Zone& zone : catalog_.zones()) {
      Result<int64_t> sum = nodes_.SumTensorCoresInZone(txn, zone.id);
      if (!sum.ok()) return sum.status();
      if (*sum > 0) used[zone.id] = *sum;
    }
    return Status::Ok();
  });
  if (!s.ok()) return s;
  std::lock_guard lock(zone_mu_);
  zone_tensorcores_ = std::move(used);
  project_tensorcores_.clear();  // recounted lazily by ProjectUsed
  return Status::Ok();
}

Result<int64_t> NodeManager::ProjectUsed(db::Txn& txn, const std::string& project) {
  {
    std::lock_guard lock(zone_mu_);
    auto it = project_tensorcores_.find(project);
    if (it != project_tensorcores_.end()) return it->second;
  }
  Result<int64_t> sum = nodes_.SumTensorCores(txn, project, db::NodeRepository::kAllZones);
  if (!sum.ok()) return sum.status();
  std::lock_guard lock(zone_mu_);
  project_tensorcores_[project] = *sum;
  return *sum;
}

void NodeManager::AddProjectUsed(const std::string& project, int64_t delta) {
  std::lock_guard lock(zone_mu_);
  auto it = project_tensorcores_.find(project);
  if (it != project_tensorcores_.end()) it->second += delta;  // absent: counted on first use
}

int64_t NodeManager::ZoneUsed(const std::string& zone) const {
  std::lock_guard lock(zone_mu_);
  auto it = zone_tensorcores_.find(zone);
  return it == zone_tensorcores_.end() ? 0 : it->second;
}

void NodeManager::AddZoneUsed(const std::string& zone, int64_t delta) {
  std::lock_guard lock(zone_mu_);
  zone_tensorcores_[zone] += delta;
}

Status NodeManager::ResolveAcceleratorType(const NodeKey& key, const NodeSpec& spec,
                                           engine::AcceleratorType* type) const {
  if (spec.accelerator_type) {
    Result<engine::AcceleratorType> found = engine::FindAcceleratorType(*spec.accelerator_type);
    if (!found.ok()) {
      return Status::InvalidArgument("Invalid value for field 'acceleratorType': '" +
                                     *spec.accelerator_type + "' is not a known accelerator type.");
    }
    *type = *found;
    if (spec.config_type || spec.config_topology) {
      Result<engine::AcceleratorType> by_config = engine::FindAcceleratorTypeByConfig(
          spec.config_type.value_or(""), spec.config_topology.value_or(""));
      if (!by_config.ok() || by_config->name != type->name) {
        return Status::InvalidArgument("acceleratorType '" + type->name +
                                       "' and acceleratorConfig disagree; give one of them.");
      }
    }
  } else if (spec.config_type || spec.config_topology) {
    if (!spec.config_type || !spec.config_topology) {
      return Status::InvalidArgument(
          "acceleratorConfig needs both 'type' and 'topology' (e.g. {\"type\": \"V4\", "
          "\"topology\": \"2x2x1\"}).");
    }
    Result<engine::AcceleratorType> found =
        engine::FindAcceleratorTypeByConfig(*spec.config_type, *spec.config_topology);
    if (!found.ok()) return found.status();
    *type = *found;
  } else {
    return Status::InvalidArgument(
        "One of 'acceleratorType' or 'acceleratorConfig' must be set (e.g. \"acceleratorType\": "
        "\"v5litepod-8\").");
  }
  if (!catalog_.Offers(key.zone, *type)) {
    return Status::InvalidArgument(
        "Accelerator type '" + type->name + "' is not available in zone '" + key.zone +
        "'. List the types a zone offers with GET " + "/v2/" + key.Parent() + "/acceleratorTypes.");
  }
  return Status::Ok();
}

Result<Operation> NodeManager::Create(const NodeKey& key, const NodeSpec& spec) {
  TPUEMU_RETURN_IF_ERROR(ValidateProjectId(key.project));
  const Zone* zone = catalog_.FindZone(key.zone);
  if (zone == nullptr) return NotFound(key.Parent());
  TPUEMU_RETURN_IF_ERROR(ValidateNodeId(key.node_id));
  if (spec.runtime_version.empty()) {
    return Status::InvalidArgument(
        "Field 'runtimeVersion' is required (e.g. "
        "\"tpu-ubuntu2204-base\").");
  }
  if (!catalog_.HasRuntimeVersion(spec.runtime_version)) {
    return Status::InvalidArgument("Invalid value for field 'runtimeVersion': runtime version '" +
                                   spec.runtime_version + "' was not found in zone '" + key.zone +
                                   "'.");
  }
  TPUEMU_RETURN_IF_ERROR(ValidateFields(spec.fields));
  Node node;
  node.key = key;
  TPUEMU_RETURN_IF_ERROR(ResolveAcceleratorType(key, spec, &node.type));
  node.uid = NewNodeUid();
  node.state = NodeState::kCreating;
  node.runtime_version = spec.runtime_version;
  node.create_time = NowRfc3339();
  node.fields = spec.fields;
  Canonicalize(key, zone->region, node.fields);

  Operation op = NewOperation(key, NodeVerb::kCreate);
  int64_t due_ms = NowUnixMs() + options_.provisioning_delay_ms;
  bool created = false;
  Status s = batcher_.Run(
      [&](db::Txn& txn) -> Status {
        Result<db::NodeRow> existing = nodes_.Get(txn, key.Name());
        if (existing.ok())
          return Status::AlreadyExists("Resource '" + key.Name() + "' already exists");
        if (existing.status().code() != StatusCode::kNotFound) return existing.status();
        if (options_.project_quota_tensorcores > 0) {
          Result<int64_t> used = ProjectUsed(txn, key.project);
          if (!used.ok()) return used.status();
          if (*used + node.type.tensorcores > options_.project_quota_tensorcores) {
            return Status::ResourceExhausted(
                "Quota 'TPU_TENSORCORES_PER_PROJECT' exceeded. Limit: " +
                std::to_string(options_.project_quota_tensorcores) + " in project " + key.project +
                " (in use: " + std::to_string(*used) + ", requested: " +
                std::to_string(node.type.tensorcores) + " for " + node.type.name + ").");
          }
        }
        bool fits =
            ZoneUsed(key.zone) + node.type.tensorcores <= options_.zone_capacity_tensorcores;
        if (!fits) {
          // Like the real service: the create is accepted and its Operation fails with code 8.
          op.done = true;
          op.end_time = NowRfc3339();
          op.error = Status::ResourceExhausted(
              "There is no more capacity in the zone \"" + key.zone +
              "\"; you can try in another zone where Cloud TPU Nodes are offered (see "
              "https://cloud.google.com/tpu/docs/regions) [EID: 0x" +
              op.name.substr(op.name.size() - 8) + "]");
        } else {
          node.pending_operation = op.name;
          node.pending_due_ms = due_ms;
          Result<int64_t> seq = nodes_.Insert(txn, NodeToRow(node));
          if (!seq.ok()) return seq.status();
          node.seq = *seq;
        }
        Result<int64_t> op_seq = operations_.Insert(txn, OperationToRow(op));
        if (!op_seq.ok()) return op_seq.status();
        op.seq = *op_seq;
        if (fits) {
          // Last, so a body that fails earlier leaves the count untouched.
          AddZoneUsed(key.zone, node.type.tensorcores);
          AddProjectUsed(key.project, node.type.tensorcores);
          created = true;
        }
        return Status::Ok();
      },
      [&] {
        if (created) Notify(node, NodeState::kUnspecified);
      });
  if (!s.ok()) {
    if (created) (void)ReseedZoneUsage();  // the body counted a node whose commit failed
    return s;
  }
  if (created) Schedule(key.Name(), due_ms);
  return op;
}

Result<Node> NodeManager::Get(const NodeKey& key) const {
  Result<std::shared_ptr<const NodeView>> view = GetView(key);
  if (!view.ok()) return view.status();
  return (*view)->node;
}

Result<std::shared_ptr<const NodeView>> NodeManager::GetView(const NodeKey& key) const {
  const std::string name = key.Name();
  if (std::shared_ptr<const NodeView> cached = cache_.Find(name)) return cached;
  const uint64_t generation = cache_.Generation();
  Result<db::NodeRow> row = nodes_.Get(name);
  if (!row.ok()) {
    return row.status().code() == StatusCode::kNotFound ? NotFound(name) : row.status();
  }
  Result<Node> node = NodeFromRow(*row);
  if (!node.ok()) return node.status();
  return cache_.Insert(std::move(node).value(), generation);
}

Result<NodePage> NodeManager::List(const std::string& project, const std::string& zone,
                                   const PageRequest& page) const {
  Result<NodeViewPage> views = ListViews(project, zone, page);
  if (!views.ok()) return views.status();
  NodePage out;
  for (const auto& view : views->nodes) out.nodes.push_back(view->node);
  out.next_page_token = std::move(views->next_page_token);
  return out;
}

Result<NodeViewPage> NodeManager::ListViews(const std::string& project, const std::string& zone,
                                            const PageRequest& page) const {
  if (zone != db::NodeRepository::kAllZones && catalog_.FindZone(zone) == nullptr) {
    return NotFound("projects/" + project + "/locations/" + zone);
  }
  Result<int64_t> after = DecodePageToken(page.page_token);
  if (!after.ok()) return after.status();
  int size = PageSize(page);
  const uint64_t generation = cache_.Generation();
  Result<std::vector<db::NodeRow>> rows = nodes_.List(project, zone, *after, size + 1);
  if (!rows.ok()) return rows.status();
  NodeViewPage out;
  for (int i = 0; i < static_cast<int>(rows->size()) && i < size; ++i) {
    // A cached view was filled after the last batch of writes ended: never older than the row.
    std::shared_ptr<const NodeView> view = cache_.Find((*rows)[i].name);
    if (!view) {
      Result<Node> node = NodeFromRow((*rows)[i]);
      if (!node.ok()) return node.status();
      view = cache_.Insert(std::move(node).value(), generation);
    }
    out.nodes.push_back(std::move(view));
  }
  if (static_cast<int>(rows->size()) > size) {
    out.next_page_token = EncodePageToken(out.nodes.back()->node.seq);
  }
  return out;
}

Result<Operation> NodeManager::BeginTransition(const NodeKey& key, NodeVerb verb,
                                               const std::function<Status(Node&)>& mutate) {
  Operation op = NewOperation(key, verb);
  int64_t due_ms = NowUnixMs() + options_.transition_delay_ms;
  Node node;
  NodeState previous = NodeState::kUnspecified;
  Status s = batcher_.Run(
      [&](db::Txn& txn) -> Status {
        Result<db::NodeRow> row = nodes_.Get(txn, key.Name());
        if (!row.ok()) {
          return row.status().code() == StatusCode::kNotFound ? NotFound(key.Name()) : row.status();
        }
        Result<Node> loaded = NodeFromRow(*row);
        if (!loaded.ok()) return loaded.status();
        node = std::move(loaded).value();
        previous = node.state;
        TPUEMU_RETURN_IF_ERROR(CheckTransition(key.Name(), node.state, verb));
        if (node.pending_operation) {
          return Status::FailedPrecondition(
              "Node '" + key.Name() + "' has an operation in progress: " + *node.pending_operation);
        }
        if (mutate) TPUEMU_RETURN_IF_ERROR(mutate(node));
        node.state = TransientState(verb, node.state);
        node.pending_operation = op.name;
        node.pending_due_ms = due_ms;
        Status updated = nodes_.Update(txn, NodeToRow(node));
        if (!updated.ok()) return updated;
        Result<int64_t> op_seq = operations_.Insert(txn, OperationToRow(op));
        if (!op_seq.ok()) return op_seq.status();
        op.seq = *op_seq;
        return Status::Ok();
      },
      [&] {
        if (node.state != previous) Notify(node, previous);
      });
  if (!s.ok()) return s;
  Schedule(key.Name(), due_ms);
  return op;
}

Result<Operation> NodeManager::Delete(const NodeKey& key) {
  return BeginTransition(key, NodeVerb::kDelete, nullptr);
}

Result<Operation> NodeManager::Start(const NodeKey& key) {
  return BeginTransition(key, NodeVerb::kStart, nullptr);
}

Result<Operation> NodeManager::Stop(const NodeKey& key) {
  return BeginTransition(key, NodeVerb::kStop, nullptr);
}

Result<Operation> NodeManager::Update(const NodeKey& key, const json& patch,
                                      const std::vector<std::string>& mask) {
  if (mask.empty()) {
    return Status::InvalidArgument(
        "Field 'updateMask' is required; supported paths: description, "
        "tags, labels, metadata, network_config.enable_external_ips, "
        "data_disks.");
  }
  std::vector<std::string> paths;
  for (const std::string& raw : mask) {
    std::string path = SnakeCase(raw);
    static const char* kSupported[] = {
        "description", "tags", "labels", "metadata", "network_config.enable_external_ips",
        "data_disks"};
    if (std::find(std::begin(kSupported), std::end(kSupported), path) == std::end(kSupported)) {
      return Status::InvalidArgument("Invalid value for field 'updateMask': path '" + raw +
                                     "' cannot be updated. Supported paths: description, tags, "
                                     "labels, metadata, network_config.enable_external_ips, "
                                     "data_disks.");
    }
    paths.push_back(path);
  }
  TPUEMU_RETURN_IF_ERROR(ValidateFields(patch));
  auto apply = [&](Node& node) -> Status {
    json& f = node.fields;
    for (const std::string& path : paths) {
      if (path == "network_config.enable_external_ips") {
        bool on = patch.contains("networkConfig") &&
                  patch["networkConfig"].value("enableExternalIps", false);
        f["networkConfig"]["enableExternalIps"] = on;
        continue;
      }
      const char* key = path == "data_disks" ? "dataDisks" : path.c_str();
      if (patch.contains(key)) {
        f[key] = patch[key];
      } else {
        f.erase(key);
      }
    }
    return Status::Ok();
  };
  return BeginTransition(key, NodeVerb::kUpdate, apply);
}

void NodeManager::Schedule(const std::string& node_name, int64_t due_ms) {
  scheduler_.At(due_ms, [this, node_name] { CompleteTransition(node_name); });
}

void NodeManager::CompleteTransition(const std::string& node_name) {
  Node node;
  NodeState previous = NodeState::kUnspecified;
  bool changed = false;
  bool freed = false;
  Status s = batcher_.Run(
      [&](db::Txn& txn) -> Status {
        Result<db::NodeRow> row = nodes_.Get(txn, node_name);
        // Gone or already completed (a reset, or a duplicate schedule after recovery): nothing to
        // do.
        if (!row.ok() || !row->pending_operation) return Status::Ok();
        Result<Node> loaded = NodeFromRow(*row);
        if (!loaded.ok()) return loaded.status();
        node = std::move(loaded).value();
        previous = node.state;
        Result<db::OperationRow> op_row = operations_.Get(txn, *node.pending_operation);
        if (!op_row.ok()) return op_row.status();
        Result<Operation> op = OperationFromRow(*op_row);
        if (!op.ok()) return op.status();
        Result<NodeVerb> verb = ParseNodeVerb(op->verb);
        if (!verb.ok()) return verb.status();

        std::optional<NodeState> final_state = FinalState(*verb, node.state);
        node.pending_operation.reset();
        node.pending_due_ms.reset();
        if (final_state) {
          node.state = *final_state;
          Status updated = nodes_.Update(txn, NodeToRow(node));
          if (!updated.ok()) return updated;
          op->response = RenderNode(node, /*for_operation=*/true);
          op->response["@type"] = kNodeType;
        } else {
          Status deleted = nodes_.Delete(txn, node_name);
          if (!deleted.ok()) return deleted;
          node.state = NodeState::kUnspecified;  // observers read "gone"
          op->response = {{"@type", kEmptyType}};
        }
        op->done = true;
        op->end_time = NowRfc3339();
        TPUEMU_RETURN_IF_ERROR(operations_.Update(txn, OperationToRow(*op)));
        if (!final_state) {
          AddZoneUsed(node.key.zone, -node.type.tensorcores);
          AddProjectUsed(node.key.project, -node.type.tensorcores);
          freed = true;
        }
        changed = true;
        return Status::Ok();
      },
      [&] {
        if (changed && node.state != previous) Notify(node, previous);
      });
  if (!s.ok()) {
    if (freed) (void)ReseedZoneUsage();
    // The store refused (busy, I/O): retry later rather than leave the node stuck mid-transition.
    Schedule(node_name, NowUnixMs() + 100);
  }
}

Result<json> NodeManager::GuestAttributes(const NodeKey& key, const std::string& query_path,
                                          const std::vector<std::string>& worker_ids) const {
  Result<Node> node = Get(key);
  if (!node.ok()) return node.status();
  std::vector<int> workers;
  if (worker_ids.empty()) {
    for (int w = 0; w < node->type.workers; ++w) workers.push_back(w);
  } else {
    for (const std::string& id : worker_ids) {
      int w = -1;
      auto [end, ec] = std::from_chars(id.data(), id.data() + id.size(), w);
      if (ec != std::errc() || end != id.data() + id.size() || w < 0 || w >= node->type.workers) {
        return Status::InvalidArgument("Invalid value for field 'workerIds': '" + id + "'; node '" +
                                       key.Name() + "' has workers 0.." +
                                       std::to_string(node->type.workers - 1));
      }
      workers.push_back(w);
    }
  }
  json out = json::array();
  for (int w : workers) {
    // What the guest agent publishes: host keys, which gcloud ssh reads for known_hosts.
    std::string fingerprint =
        std::to_string(std::hash<std::string>{}(node->uid + "/" + std::to_string(w)));
    json items = json::array({
        {{"namespace", "hostkeys"},
         {"key", "ssh-ed25519"},
         {"value", "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI" + fingerprint}},
        {{"namespace", "guestInventory"},
         {"key", "Hostname"},
         {"value", "t1v-n-" + node->uid.substr(0, 8) + "-w-" + std::to_string(w)}},
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

Result<Operation> NodeManager::GetOperation(const std::string& name) const {
  Result<db::OperationRow> row = operations_.Get(name);
  if (!row.ok()) {
    return row.status().code() == StatusCode::kNotFound ? NotFound(name) : row.status();
  }
  return OperationFromRow(*row);
}

Result<OperationPage> NodeManager::ListOperations(const std::string& project,
                                                  const std::string& zone,
                                                  const PageRequest& page) const {
  if (zone != db::NodeRepository::kAllZones && catalog_.FindZone(zone) == nullptr) {
    return NotFound("projects/" + project + "/locations/" + zone);
  }
  Result<int64_t> after = DecodePageToken(page.page_token);
  if (!after.ok()) return after.status();
  int size = PageSize(page);
  Result<std::vector<db::OperationRow>> rows = operations_.List(project, zone, *after, size + 1);
  if (!rows.ok()) return rows.status();
  OperationPage out;
  for (int i = 0; i < static_cast<int>(rows->size()) && i < size; ++i) {
    Result<Operation> op = OperationFromRow((*rows)[i]);
    if (!op.ok()) return op.status();
    out.operations.push_back(std::move(op).value());
  }
  if (static_cast<int>(rows->size()) > size) {
    out.next_page_token = EncodePageToken(out.operations.back().seq);
  }
  return out;
}

Status NodeManager::DeleteOperation(const std::string& name) {
  return batcher_.Run([&](db::Txn& txn) -> Status {
    Result<db::OperationRow> row = operations_.Get(txn, name);
    if (!row.ok()) {
      return row.status().code() == StatusCode::kNotFound ? NotFound(name) : row.status();
    }
    if (!row->done) {
      return Status::FailedPrecondition("Operation '" + name +
                                        "' is still running; wait for it or cancel it first.");
    }
    return operations_.Delete(txn, name);
  });
}

Status NodeManager::CancelOperation(const std::string& name) {
  return batcher_.Run([&](db::Txn& txn) -> Status {
    Result<db::OperationRow> row = operations_.Get(txn, name);
    if (!row.ok()) {
      return row.status().code() == StatusCode::kNotFound ? NotFound(name) : row.status();
    }
    // Best effort (AIP-151): node transitions cannot be interrupted, so a running operation is
    // only marked cancelRequested and still completes; a finished one is left as it is.
    if (row->done || row->cancel_requested) return Status::Ok();
    row->cancel_requested = true;
    return operations_.Update(txn, *row);
  });
}

Result<int64_t> NodeManager::TensorCoresInZone(const std::string& zone) const {
  return ZoneUsed(zone);
}

Status NodeManager::Reset() {
  scheduler_.Clear();
  cache_.BeginWrite();
  Status wiped = store_.WipeAll();
  cache_.EndWrite();
  TPUEMU_RETURN_IF_ERROR(wiped);
  std::lock_guard lock(zone_mu_);
  zone_tensorcores_.clear();
  project_tensorcores_.clear();
  return Status::Ok();
}

void NodeManager::SetStateObserver(StateObserver observer) {
  std::lock_guard lock(observer_mu_);
  observers_.clear();
  if (observer) observers_.push_back(std::move(observer));
}

void NodeManager::AddStateObserver(StateObserver observer) {
  std::lock_guard lock(observer_mu_);
  if (observer) observers_.push_back(std::move(observer));
}

void NodeManager::Notify(const Node& node, NodeState previous) {
  std::lock_guard lock(observer_mu_);
  for (const StateObserver& observer : observers_) observer(node, previous);
}

}  // namespace tpuemu::service
