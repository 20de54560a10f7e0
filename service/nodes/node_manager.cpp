#include "service/nodes/node_manager.h"

#include <algorithm>
#include <memory>

#include "service/common/clock.h"
#include "service/common/not_found.h"
#include "service/common/validation.h"
#include "service/nodes/node_event.h"
#include "service/nodes/node_rows.h"
#include "service/nodes/update_mask.h"

namespace tpuemu::service {
namespace {

using nlohmann::json;

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

Operation NewNodeOperation(const NodeKey& key, NodeVerb verb) {
  return NewOperation(key.project, key.zone, key.Name(), NodeVerbName(verb));
}

}  // namespace

NodeManager::NodeManager(db::Store& store, WritePath& writes, Scheduler& scheduler,
                         const Catalog& catalog, NodeManagerOptions options)
    : store_(store),
      writes_(writes),
      scheduler_(scheduler),
      catalog_(catalog),
      options_(options),
      nodes_(store) {
  writes_.batcher().SetBatchHooks([this] { cache_.BeginWrite(); }, [this] { cache_.EndWrite(); });
}

NodeManager::~NodeManager() { writes_.batcher().Stop(); }

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

Result<engine::AcceleratorType> NodeManager::CheckSpec(const NodeKey& key,
                                                       const NodeSpec& spec) const {
  TPUEMU_RETURN_IF_ERROR(ValidateProjectId(key.project));
  if (catalog_.FindZone(key.zone) == nullptr) return ResourceNotFound(key.Parent());
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
  engine::AcceleratorType type;
  TPUEMU_RETURN_IF_ERROR(ResolveAcceleratorType(key, spec, &type));
  return type;
}

Result<Operation> NodeManager::Create(const NodeKey& key, const NodeSpec& spec) {
  Result<engine::AcceleratorType> type = CheckSpec(key, spec);
  if (!type.ok()) return type.status();
  Node node;
  node.key = key;
  node.type = *type;
  node.uid = NewNodeUid();
  node.state = NodeState::kCreating;
  node.runtime_version = spec.runtime_version;
  node.create_time = NowRfc3339();
  node.fields = spec.fields;
  node.queued_resource = spec.queued_resource;
  node.multislice_node = spec.multislice_node;
  Status host_refused;  // this host cannot boot the node's workers: a stockout, below
  if (sandbox_policy_) {
    Result<Node::Sandbox> sandbox = sandbox_policy_(node);
    if (sandbox.ok()) {
      node.sandbox = *sandbox;
    } else {
      host_refused = sandbox.status();
    }
  }
  Canonicalize(key, catalog_.FindZone(key.zone)->region, node.fields);

  Operation op = NewNodeOperation(key, NodeVerb::kCreate);
  int64_t due_ms = NowUnixMs() + options_.provisioning_delay_ms;
  bool created = false;
  PendingEvents events(writes_.event_sink());
  Status s = writes_.batcher().Run(
      [&](db::Txn& txn) -> Status {
        Result<db::NodeRow> existing = nodes_.Get(txn, key.Name());
        if (existing.ok())
          return Status::AlreadyExists("Resource '" + key.Name() + "' already exists");
        if (existing.status().code() != StatusCode::kNotFound) return existing.status();
        if (node.ProjectTensorCores() > 0) {
          TPUEMU_RETURN_IF_ERROR(writes_.quota().CheckProject(txn, key.project, node.type));
        }
        Status refused = spec.injected_failure;
        if (refused.ok() && node.ZoneTensorCores() > 0) {
          TPUEMU_RETURN_IF_ERROR(writes_.quota().Sync(txn, key.zone));
          refused = writes_.quota().CheckZone(key.zone, node.ZoneTensorCores(), op.name);
        }
        if (refused.ok() && !host_refused.ok()) {
          refused = ZoneStockout(key.zone, op.name, host_refused.message());
        }
        const bool fits = refused.ok();
        if (!fits) {
          // Like the real service: the create is accepted and its Operation fails with code 8.
          FailOperation(op, std::move(refused));
        } else {
          node.pending_operation = op.name;
          node.pending_due_ms = due_ms;
          cache_.Touch(node.key.Name());
          Result<int64_t> seq = nodes_.Insert(txn, Row(node));
          if (!seq.ok()) return seq.status();
          node.seq = *seq;
        }
        TPUEMU_RETURN_IF_ERROR(writes_.operations().Insert(txn, op));
        if (fits)
          TPUEMU_RETURN_IF_ERROR(events.Append(txn, NodeEvent(node, NodeState::kUnspecified)));
        if (fits) {
          // Last, so a body that fails earlier leaves the count untouched.
          writes_.quota().AddProject(key.project, node.ProjectTensorCores());
          writes_.quota().AddZone(key.zone, node.ZoneTensorCores());
          created = true;
        }
        return Status::Ok();
      },
      [&] {
        events.Publish();
        if (created) Notify(node, NodeState::kUnspecified);
      });
  // What the sandbox policy reserved goes back unless the node was written.
  if ((!s.ok() || !created) && node.sandbox.enabled && sandbox_abandon_) sandbox_abandon_(node);
  if (!s.ok()) {
    if (created) (void)writes_.quota().Reseed();  // the body counted a node whose commit failed
    return s;
  }
  if (created) Schedule(key.Name(), due_ms);
  return op;
}

Result<Node> NodeManager::Amend(const NodeKey& key,
                                const std::function<Status(Node&, db::Txn&)>& change,
                                const FaultEventFn& fault) {
  Node node;
  NodeState previous = NodeState::kUnspecified;
  int64_t zone_before = 0;
  bool changed = false;
  PendingEvents events(writes_.event_sink());
  Status s = writes_.batcher().Run(
      [&](db::Txn& txn) -> Status {
        Result<db::NodeRow> row = nodes_.Get(txn, key.Name());
        if (!row.ok()) return NotFoundAs(row.status(), key.Name());
        Result<Node> loaded = NodeFromRow(*row);
        if (!loaded.ok()) return loaded.status();
        node = std::move(loaded).value();
        previous = node.state;
        zone_before = node.ZoneTensorCores();
        TPUEMU_RETURN_IF_ERROR(change(node, txn));
        cache_.Touch(node.key.Name());
        TPUEMU_RETURN_IF_ERROR(nodes_.Update(txn, Row(node)));
        if (node.state != previous) {
          TPUEMU_RETURN_IF_ERROR(events.Append(txn, NodeEvent(node, previous)));
        }
        if (fault) TPUEMU_RETURN_IF_ERROR(events.Append(txn, fault(node)));
        writes_.quota().AddZone(key.zone, node.ZoneTensorCores() - zone_before);  // last
        changed = true;
        return Status::Ok();
      },
      [&] {
        events.Publish();
        if (node.state != previous) Notify(node, previous);
      });
  if (!s.ok()) {
    if (changed) (void)writes_.quota().Reseed();
    return s;
  }
  if (node.pending_operation && node.pending_due_ms) {
    Schedule(key.Name(), *node.pending_due_ms);
  }
  return node;
}

Result<Operation> NodeManager::BeginTransition(const NodeKey& key, NodeVerb verb,
                                               const std::function<Status(Node&)>& mutate) {
  Operation op = NewNodeOperation(key, verb);
  int64_t due_ms = NowUnixMs() + options_.transition_delay_ms;
  Node node;
  NodeState previous = NodeState::kUnspecified;
  PendingEvents events(writes_.event_sink());
  Status s = writes_.batcher().Run(
      [&](db::Txn& txn) -> Status {
        Result<db::NodeRow> row = nodes_.Get(txn, key.Name());
        if (!row.ok()) return NotFoundAs(row.status(), key.Name());
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
        cache_.Touch(node.key.Name());
        Status updated = nodes_.Update(txn, Row(node));
        if (!updated.ok()) return updated;
        if (node.state != previous) {
          TPUEMU_RETURN_IF_ERROR(events.Append(txn, NodeEvent(node, previous)));
        }
        return writes_.operations().Insert(txn, op);
      },
      [&] {
        events.Publish();
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
  Result<NodeUpdateMask> parsed = NodeUpdateMask::Parse(mask);
  if (!parsed.ok()) return parsed.status();
  TPUEMU_RETURN_IF_ERROR(ValidateFields(patch));
  auto apply = [&](Node& node) -> Status {
    parsed->Apply(patch, node.fields);
    return Status::Ok();
  };
  return BeginTransition(key, NodeVerb::kUpdate, apply);
}

void NodeManager::Schedule(const std::string& node_name, int64_t due_ms) {
  scheduler_.At(due_ms, [this, node_name] { CompleteTransition(node_name); });
}

void NodeManager::CompleteTransition(const std::string& node_name) {
  // The workers are still booting: READY waits for them (the gate gives up on its own boot
  // timeout, so this never holds a node for ever).
  if (ready_gate_ && !ready_gate_(node_name)) {
    Schedule(node_name, NowUnixMs() + 100);
    return;
  }
  // Queued without waiting (the scheduler thread hands over every transition that fell due, and
  // they share a commit), ahead of client writes: a transition keeps its delay under write load.
  struct Completion {
    explicit Completion(EventSink* sink) : events(sink) {}
    Node node;
    NodeState previous = NodeState::kUnspecified;
    bool changed = false;
    bool freed = false;
    PendingEvents events;
  };
  auto c = std::make_shared<Completion>(writes_.event_sink());
  writes_.batcher().Submit(
      [this, c, node_name](db::Txn& txn) -> Status {
        Node& node = c->node;
        NodeState& previous = c->previous;
        PendingEvents& events = c->events;
        Result<db::NodeRow> row = nodes_.Get(txn, node_name);
        // Gone or already completed (a reset, or a duplicate schedule after recovery): nothing to
        // do.
        if (!row.ok() || !row->pending_operation) return Status::Ok();
        // Another replica began a newer transition of it, or adopted it: that one completes it.
        if (row->owner && *row->owner != options_.replica_id) return Status::Ok();
        Result<Node> loaded = NodeFromRow(*row);
        if (!loaded.ok()) return loaded.status();
        node = std::move(loaded).value();
        previous = node.state;
        Result<Operation> op = writes_.operations().Load(txn, *node.pending_operation);
        if (!op.ok()) return op.status();
        Result<NodeVerb> verb = ParseNodeVerb(op->verb);
        if (!verb.ok()) return verb.status();

        std::optional<NodeState> final_state = FinalState(*verb, node.state);
        node.pending_operation.reset();
        node.pending_due_ms.reset();
        if (final_state) {
          node.state = *final_state;
          cache_.Touch(node.key.Name());
          Status updated = nodes_.Update(txn, Row(node));
          if (!updated.ok()) return updated;
          json response = RenderNode(node, {.for_operation = true});
          response["@type"] = kNodeType;
          CompleteOperation(*op, std::move(response));
        } else {
          cache_.Touch(node_name);
          Status deleted = nodes_.Delete(txn, node_name);
          if (!deleted.ok()) return deleted;
          node.state = NodeState::kUnspecified;  // observers read "gone"
          CompleteOperation(*op, {{"@type", kEmptyType}});
        }
        TPUEMU_RETURN_IF_ERROR(writes_.operations().Update(txn, *op));
        if (node.state != previous) {
          TPUEMU_RETURN_IF_ERROR(events.Append(txn, NodeEvent(node, previous)));
        }
        if (!final_state) {
          writes_.quota().AddProject(node.key.project, -node.ProjectTensorCores());
          writes_.quota().AddZone(node.key.zone, -node.ZoneTensorCores());
          c->freed = true;
        }
        c->changed = true;
        return Status::Ok();
      },
      [this, c] {
        c->events.Publish();
        if (c->changed && c->node.state != c->previous) Notify(c->node, c->previous);
      },
      [this, c, node_name](const Status& s) {
        if (s.ok()) return;
        if (c->freed) (void)writes_.quota().Reseed();
        // The store refused (busy, I/O): retry later rather than leave the node stuck
        // mid-transition.
        Schedule(node_name, NowUnixMs() + 100);
      },
      /*urgent=*/true);
}

std::optional<int64_t> NodeManager::WriteBacklog() const {
  if (options_.max_write_lag_ms <= 0) return std::nullopt;
  // The transition lag: how long a due transition has waited for its commit. Queued client writes
  // are not counted: each one holds a writer thread (--writer-threads) until it commits, so they
  // are a closed loop that cannot outgrow the store, and while they wait for a busy batch no
  // transition is late (due ones go first). Counting them answered 429 to a create flood the store
  // kept up with (issue 44).
  const int64_t lag_ms = writes_.batcher().QueueDelayMs(/*urgent=*/true);
  if (lag_ms <= options_.max_write_lag_ms) return std::nullopt;
  // Long enough for the backlog to drain at the rate it builds up.
  return std::max<int64_t>(100, 2 * lag_ms);
}

Result<int64_t> NodeManager::TensorCoresInZone(const std::string& zone) const {
  return writes_.quota().ZoneUsed(zone);
}

Status NodeManager::Reset() {
  scheduler_.Clear();
  cache_.Clear();
  Status wiped = store_.WipeAll();
  cache_.Clear();
  TPUEMU_RETURN_IF_ERROR(wiped);
  writes_.quota().Clear();
  return Status::Ok();
}
}  // namespace tpuemu::service
