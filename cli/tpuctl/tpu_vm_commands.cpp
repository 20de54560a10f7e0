// `tpuctl compute tpus tpu-vm create|list|describe|delete|start|stop|update`: gcloud's arguments
// and flags (docs/api-fidelity.md §9), each on the matching nodes.* REST call. Mutations
// wait on their Operation (cli/tpuctl/operation_wait.h) unless --async; they print the resource
// only when --format is given (the Operation with --async), and a status line on stderr.
#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <set>

#include <CLI/CLI.hpp>

#include "cli/tpuctl/app.h"
#include "cli/tpuctl/operation_wait.h"

namespace tpuemu::cli {
namespace {

using nlohmann::json;

const char* kNodeColumns =
    "name.basename():label=NAME,name.segment(-3):label=ZONE,acceleratorType:label=ACCELERATOR_TYPE,"
    "acceleratorConfig.type:label=TYPE,acceleratorConfig.topology:label=TOPOLOGY,"
    "networkConfig.network.basename():label=NETWORK,cidrBlock:label=RANGE,state:label=STATUS";

struct NodeRef {
  std::string tpu;
  std::string zone;
};

// The node's REST name, or a usage error. A full name ("projects/.../nodes/x") is taken as is.
Result<std::string> NodeName(Context& ctx, const NodeRef& ref) {
  if (ref.tpu.find('/') != std::string::npos) return ref.tpu;
  std::string zone = ctx.ZoneOrDefault(ref.zone);
  if (zone.empty()) {
    return Status::InvalidArgument("--zone is required (or set TPUEMU_ZONE)");
  }
  return "projects/" + ctx.project + "/locations/" + zone + "/nodes/" + ref.tpu;
}

std::string Basename(const std::string& name) { return name.substr(name.find_last_of('/') + 1); }

CLI::App* AddNodeCommand(CLI::App& parent, const std::string& verb, const std::string& help,
                         NodeRef& ref) {
  CLI::App* cmd = parent.add_subcommand(verb, help);
  cmd->add_option("TPU", ref.tpu, "TPU VM id (or its full resource name)")->required();
  cmd->add_option("--zone", ref.zone, "Zone (default: TPUEMU_ZONE)");
  return cmd;
}

// Runs a node mutation: prints the Operation under --async, else waits and prints the result.
int FinishMutation(Context& ctx, const Result<json>& op, bool async, const std::string& verb_ing,
                   const std::string& verb_ed, const std::string& tpu) {
  if (!op.ok()) return ctx.Fail(op.status());
  if (async) {
    ctx.Note(verb_ing + " request issued for: [" + tpu + "]");
    ctx.Note("Check operation [" + op->value("name", std::string()) + "] for its status.");
    if (ctx.format_given()) ctx.PrintOne(*op, DefaultColumns("name,done"));
    return kExitOk;
  }
  Result<json> result = WaitForOperation(ctx, *op);
  if (!result.ok()) return ctx.Fail(result.status());
  result->erase("@type");  // the Any's type tag is not part of the Node
  ctx.Note(verb_ed + " tpu [" + tpu + "].");
  if (ctx.format_given() && result->contains("name")) {
    ctx.PrintOne(*result, DefaultColumns(kNodeColumns));
  }
  return kExitOk;
}

struct CreateFlags {
  NodeRef ref;
  std::string accelerator_type, type, topology, version, description, network, subnetwork, range;
  std::string labels, metadata, tags, service_account, scopes;
  bool internal_ips = false, preemptible = false, spot = false, reserved = false, async = false;
};

int Create(Context& ctx, const CreateFlags& f) {
  if (!f.type.empty() != !f.topology.empty()) {
    return ctx.UsageError("--type and --topology must be given together");
  }
  if (!f.type.empty() && !f.accelerator_type.empty()) {
    return ctx.UsageError("--accelerator-type cannot be combined with --type/--topology");
  }
  json node = {{"runtimeVersion", f.version}};
  if (!f.type.empty()) {
    std::string type = f.type;
    for (char& c : type) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (type == "V5LITEPOD" || type == "V5E") type = "V5LITE_POD";
    node["acceleratorConfig"] = {{"type", type}, {"topology", f.topology}};
  } else {
    node["acceleratorType"] = f.accelerator_type.empty() ? "v2-8" : f.accelerator_type;
  }
  if (!f.description.empty()) node["description"] = f.description;
  node["networkConfig"] = {{"network", f.network.empty() ? "default" : f.network},
                           {"enableExternalIps", !f.internal_ips}};
  if (!f.subnetwork.empty()) node["networkConfig"]["subnetwork"] = f.subnetwork;
  if (!f.range.empty()) node["cidrBlock"] = f.range;
  if (f.preemptible || f.spot || f.reserved) {
    node["schedulingConfig"] = {
        {"preemptible", f.preemptible}, {"spot", f.spot}, {"reserved", f.reserved}};
  }
  auto labels = ParseKeyValues(f.labels, "--labels");
  if (!labels.ok()) return ctx.UsageError(labels.status().message());
  if (!labels->empty()) node["labels"] = *labels;
  auto metadata = ParseKeyValues(f.metadata, "--metadata");
  if (!metadata.ok()) return ctx.UsageError(metadata.status().message());
  if (!metadata->empty()) node["metadata"] = *metadata;
  if (!f.tags.empty()) node["tags"] = SplitList(f.tags);
  if (!f.service_account.empty() || !f.scopes.empty()) {
    node["serviceAccount"] = json::object();
    if (!f.service_account.empty()) node["serviceAccount"]["email"] = f.service_account;
    if (!f.scopes.empty()) node["serviceAccount"]["scope"] = SplitList(f.scopes);
  }
  if (f.ref.tpu.find('/') != std::string::npos) {
    return ctx.UsageError("TPU must be an id (e.g. my-tpu), not a resource name");
  }
  std::string zone = ctx.ZoneOrDefault(f.ref.zone);
  if (zone.empty()) return ctx.UsageError("--zone is required (or set TPUEMU_ZONE)");
  Result<json> op =
      ctx.api->Call("POST", ctx.ZonePath(zone) + "/nodes?nodeId=" + UrlEncode(f.ref.tpu), node);
  return FinishMutation(ctx, op, f.async, "Create", "Created", f.ref.tpu);
}

struct UpdateFlags {
  NodeRef ref;
  std::string description;
  CLI::Option* description_option = nullptr;  // count() tells "" from not given
  std::string update_labels, remove_labels, add_tags, remove_tags, update_metadata, remove_metadata;
  bool clear_labels = false, clear_tags = false, clear_metadata = false;
  bool internal_ips = false, external_ips = false, async = false;
};

// gcloud's read-modify-write: get the node, change the maps/lists, PATCH the changed fields.
int Update(Context& ctx, const UpdateFlags& f) {
  Result<std::string> name = NodeName(ctx, f.ref);
  if (!name.ok()) return ctx.UsageError(name.status().message());
  Result<json> node = ctx.api->Get("/v2/" + *name);
  if (!node.ok()) return ctx.Fail(node.status());
  json patch = json::object();
  std::vector<std::string> mask;

  auto update_map = [&](const std::string& field, const std::string& mask_path, bool clear,
                        const std::string& update, const std::string& remove,
                        const std::string& flag) -> Status {
    if (!clear && update.empty() && remove.empty()) return Status::Ok();
    json map = clear ? json::object() : node->value(field, json::object());
    auto add = ParseKeyValues(update, "--update-" + flag);
    if (!add.ok()) return add.status();
    for (const std::string& key : SplitList(remove)) map.erase(key);
    for (const auto& [k, v] : *add) map[k] = v;
    patch[field] = map;
    mask.push_back(mask_path);
    return Status::Ok();
  };
  if (f.description_option->count() > 0) {
    patch["description"] = f.description;
    mask.push_back("description");
  }
  Status s =
      update_map("labels", "labels", f.clear_labels, f.update_labels, f.remove_labels, "labels");
  if (s.ok()) {
    s = update_map("metadata", "metadata", f.clear_metadata, f.update_metadata, f.remove_metadata,
                   "metadata");
  }
  if (!s.ok()) return ctx.UsageError(s.message());
  if (f.clear_tags || !f.add_tags.empty() || !f.remove_tags.empty()) {
    std::vector<std::string> tags;
    if (!f.clear_tags && node->contains("tags"))
      tags = (*node)["tags"].get<std::vector<std::string>>();
    std::set<std::string> removed;
    for (const std::string& t : SplitList(f.remove_tags)) removed.insert(t);
    std::erase_if(tags, [&](const std::string& t) { return removed.count(t) > 0; });
    for (const std::string& t : SplitList(f.add_tags)) {
      if (std::find(tags.begin(), tags.end(), t) == tags.end()) tags.push_back(t);
    }
    patch["tags"] = tags;
    mask.push_back("tags");
  }
  if (f.internal_ips || f.external_ips) {
    patch["networkConfig"] = {{"enableExternalIps", f.external_ips}};
    mask.push_back("network_config.enable_external_ips");
  }
  if (mask.empty()) {
    return ctx.UsageError(
        "nothing to update: give --description, --update-labels, --remove-labels, "
        "--clear-labels, --add-tags, --remove-tags, --clear-tags, metadata or IP flags");
  }
  std::string joined;
  for (const std::string& m : mask) joined += (joined.empty() ? "" : ",") + m;
  Result<json> op = ctx.api->Call("PATCH", "/v2/" + *name + "?updateMask=" + joined, patch);
  return FinishMutation(ctx, op, f.async, "Update", "Updated", Basename(*name));
}

int Delete(Context& ctx, const NodeRef& ref, bool async) {
  Result<std::string> name = NodeName(ctx, ref);
  if (!name.ok()) return ctx.UsageError(name.status().message());
  if (!ctx.quiet && isatty(STDIN_FILENO)) {
    *ctx.err << "Your TPU [" << Basename(*name) << "] will be deleted.\n"
             << "Do you want to continue (Y/n)?  " << std::flush;
    std::string answer;
    std::getline(std::cin, answer);
    if (!answer.empty() && (answer[0] == 'n' || answer[0] == 'N')) {
      return ctx.UsageError("Aborted by user.");
    }
  }
  Result<json> op = ctx.api->Call("DELETE", "/v2/" + *name);
  return FinishMutation(ctx, op, async, "Delete", "Deleted", Basename(*name));
}

int StartStop(Context& ctx, const NodeRef& ref, bool async, bool start) {
  Result<std::string> name = NodeName(ctx, ref);
  if (!name.ok()) return ctx.UsageError(name.status().message());
  Result<json> op =
      ctx.api->Call("POST", "/v2/" + *name + (start ? ":start" : ":stop"), json::object());
  return FinishMutation(ctx, op, async, start ? "Start" : "Stop", start ? "Started" : "Stopped",
                        Basename(*name));
}

}  // namespace

void AddTpuVmCommands(CLI::App& tpu_vm, Context& ctx) {
  auto create = std::make_shared<CreateFlags>();
  CLI::App* c = AddNodeCommand(tpu_vm, "create", "Create a TPU VM", create->ref);
  c->add_option("--accelerator-type", create->accelerator_type,
                "Accelerator type, e.g. v4-8, v5litepod-16 (default v2-8)");
  c->add_option("--type", create->type, "TPU generation (v2, v3, v4, v5litepod, v5p, v6e)");
  c->add_option("--topology", create->topology, "Chip topology, e.g. 2x2x1 (with --type)");
  c->add_option("--version", create->version, "Runtime version, e.g. tpu-ubuntu2204-base")
      ->required();
  c->add_option("--description", create->description, "Description");
  c->add_option("--network", create->network, "Network (default: default)");
  c->add_option("--subnetwork", create->subnetwork, "Subnetwork");
  c->add_flag("--internal-ips", create->internal_ips, "No external IPs");
  c->add_option("--range", create->range, "CIDR block, e.g. 10.20.30.0/24");
  c->add_flag("--preemptible", create->preemptible, "Preemptible");
  c->add_flag("--spot", create->spot, "Spot");
  c->add_flag("--reserved", create->reserved, "Use a reservation");
  c->add_option("--labels", create->labels, "KEY=VALUE,...");
  c->add_option("--metadata", create->metadata, "KEY=VALUE,...");
  c->add_option("--tags", create->tags, "TAG,...");
  c->add_option("--service-account", create->service_account, "Service account email");
  c->add_option("--scopes", create->scopes, "SCOPE,...");
  c->add_flag("--async", create->async, "Return the Operation without waiting");
  c->callback([&ctx, create] { ctx.action = [&ctx, create] { return Create(ctx, *create); }; });

  auto list_zone = std::make_shared<std::string>();
  auto page_size = std::make_shared<int>(0);
  CLI::App* l = tpu_vm.add_subcommand("list", "List TPU VMs");
  l->add_option("--zone", *list_zone, "Zone, or - for every zone (default: TPUEMU_ZONE)");
  l->add_option("--page-size", *page_size, "Items per API page");
  l->callback([&ctx, list_zone, page_size] {
    ctx.action = [&ctx, list_zone, page_size] {
      std::string zone = ctx.ZoneOrDefault(*list_zone);
      if (zone.empty()) return ctx.UsageError("--zone is required (or set TPUEMU_ZONE)");
      Result<json> nodes = ctx.ListAll(ctx.ZonePath(zone) + "/nodes", "nodes", *page_size);
      if (!nodes.ok()) return ctx.Fail(nodes.status());
      ctx.PrintList(*nodes, DefaultColumns(kNodeColumns));
      return kExitOk;
    };
  });

  auto describe = std::make_shared<NodeRef>();
  AddNodeCommand(tpu_vm, "describe", "Describe a TPU VM", *describe)->callback([&ctx, describe] {
    ctx.action = [&ctx, describe] {
      Result<std::string> name = NodeName(ctx, *describe);
      if (!name.ok()) return ctx.UsageError(name.status().message());
      Result<json> node = ctx.api->Get("/v2/" + *name);
      if (!node.ok()) return ctx.Fail(node.status());
      ctx.PrintOne(*node, DefaultColumns(kNodeColumns));
      return kExitOk;
    };
  });

  auto del = std::make_shared<NodeRef>();
  auto del_async = std::make_shared<bool>(false);
  CLI::App* d = AddNodeCommand(tpu_vm, "delete", "Delete a TPU VM", *del);
  d->add_flag("--async", *del_async, "Return the Operation without waiting");
  d->callback([&ctx, del, del_async] {
    ctx.action = [&ctx, del, del_async] { return Delete(ctx, *del, *del_async); };
  });

  for (bool start : {true, false}) {
    auto ref = std::make_shared<NodeRef>();
    auto async = std::make_shared<bool>(false);
    CLI::App* cmd = AddNodeCommand(tpu_vm, start ? "start" : "stop",
                                   start ? "Start a stopped TPU VM" : "Stop a TPU VM", *ref);
    cmd->add_flag("--async", *async, "Return the Operation without waiting");
    cmd->callback([&ctx, ref, async, start] {
      ctx.action = [&ctx, ref, async, start] { return StartStop(ctx, *ref, *async, start); };
    });
  }

  auto update = std::make_shared<UpdateFlags>();
  CLI::App* u = AddNodeCommand(tpu_vm, "update", "Update a TPU VM", update->ref);
  update->description_option =
      u->add_option("--description", update->description, "New description");
  u->add_option("--update-labels", update->update_labels, "KEY=VALUE,... to add or change");
  u->add_option("--remove-labels", update->remove_labels, "KEY,... to remove");
  u->add_flag("--clear-labels", update->clear_labels, "Remove every label");
  u->add_option("--add-tags", update->add_tags, "TAG,... to add");
  u->add_option("--remove-tags", update->remove_tags, "TAG,... to remove");
  u->add_flag("--clear-tags", update->clear_tags, "Remove every tag");
  u->add_option("--update-metadata", update->update_metadata, "KEY=VALUE,... to add or change");
  u->add_option("--remove-metadata", update->remove_metadata, "KEY,... to remove");
  u->add_flag("--clear-metadata", update->clear_metadata, "Remove every metadata entry");
  u->add_flag("--internal-ips", update->internal_ips, "Turn external IPs off");
  u->add_flag("--external-ips", update->external_ips, "Turn external IPs on");
  u->add_flag("--async", update->async, "Return the Operation without waiting");
  u->callback([&ctx, update] { ctx.action = [&ctx, update] { return Update(ctx, *update); }; });
}

}  // namespace tpuemu::cli
