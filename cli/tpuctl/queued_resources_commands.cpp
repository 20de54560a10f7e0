// `tpuctl compute tpus queued-resources create|list|describe|delete|reset|perform-maintenance`
// with gcloud's flags (gcloud's command_lib/compute/tpus/queued_resources/util.py builds the same
// bodies), `tpuctl compute tpus operations list|describe`, and
// `tpuctl compute tpus tpu-vm simulate-maintenance-event|perform-maintenance` (v2alpha1).
#include <chrono>
#include <ctime>

#include <CLI/CLI.hpp>

#include "cli/tpuctl/app.h"
#include "cli/tpuctl/operation_wait.h"

namespace tpuemu::cli {
namespace {

using nlohmann::json;

// gcloud's `queued-resources list` columns.
const char* kQrColumns =
    "name.basename():label=NAME,name.segment(-3):label=ZONE,tpu.nodeSpec.len():label=NODE_COUNT,"
    "tpu.nodeSpec[0].node.acceleratorType.basename():label=ACCELERATOR_TYPE,"
    "tpu.nodeSpec[0].node.acceleratorConfig.type.basename():label=TYPE,"
    "tpu.nodeSpec[0].node.acceleratorConfig.topology.basename():label=TOPOLOGY,"
    "state.state:label=STATE";
const char* kOperationColumns =
    "name.basename():label=ID,metadata.target.basename():label=TARGET,metadata.verb:label=VERB,"
    "done:label=DONE";

struct Ref {
  std::string id;
  std::string zone;
};

Result<std::string> Name(Context& ctx, const Ref& ref, const std::string& collection) {
  if (ref.id.find('/') != std::string::npos) return ref.id;
  std::string zone = ctx.ZoneOrDefault(ref.zone);
  if (zone.empty()) return Status::InvalidArgument("--zone is required (or set TPUEMU_ZONE)");
  return "projects/" + ctx.project + "/locations/" + zone + "/" + collection + "/" + ref.id;
}

CLI::App* AddRefCommand(CLI::App& parent, const std::string& verb, const std::string& help,
                        const std::string& what, Ref& ref) {
  CLI::App* cmd = parent.add_subcommand(verb, help);
  cmd->add_option(what, ref.id, what + " id (or its full resource name)")->required();
  cmd->add_option("--zone", ref.zone, "Zone (default: TPUEMU_ZONE)");
  return cmd;
}

// gcloud's duration flags ("90s", "30m", "2h", "1d", "1h30m"; a bare number is seconds) ->
// seconds.
Result<int64_t> DurationSeconds(const std::string& text, const std::string& flag) {
  int64_t total = 0, number = 0;
  bool digits = false;
  for (char c : text) {
    if (c >= '0' && c <= '9') {
      number = number * 10 + (c - '0');
      digits = true;
      continue;
    }
    const int64_t unit = c == 's' ? 1 : c == 'm' ? 60 : c == 'h' ? 3600 : c == 'd' ? 86400 : 0;
    if (unit == 0 || !digits) {
      return Status::InvalidArgument(flag + ": \"" + text + "\" is not a duration like 30m or 2h");
    }
    total += number * unit;
    number = 0;
    digits = false;
  }
  if (text.empty()) return Status::InvalidArgument(flag + ": empty duration");
  return total + number;
}

std::string TimeIn(int64_t seconds) {
  std::time_t t = std::time(nullptr) + seconds;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// Waits for (or, with --async, prints) a mutation's Operation; prints the result under --format.
int Finish(Context& ctx, const Result<json>& op, bool async, const std::string& what,
           const std::string& done, const std::vector<Column>& columns) {
  if (!op.ok()) return ctx.Fail(op.status());
  if (async) {
    ctx.Note("Request issued for: [" + what + "]");
    ctx.Note("Check operation [" + op->value("name", std::string()) + "] for its status.");
    if (ctx.format_given()) ctx.PrintOne(*op, DefaultColumns("name,done"));
    return kExitOk;
  }
  Result<json> result = WaitForOperation(ctx, *op);
  if (!result.ok()) return ctx.Fail(result.status());
  result->erase("@type");
  ctx.Note(done + " [" + what + "].");
  if (ctx.format_given() && result->contains("name")) ctx.PrintOne(*result, columns);
  return kExitOk;
}

struct QrCreateFlags {
  Ref ref;
  std::string node_id, node_prefix, accelerator_type, type, topology, runtime_version;
  int node_count = 0;
  bool spot = false, guaranteed = false, best_effort = false, reserved = false;
  std::string reservation, valid_after_duration, valid_after_time, valid_until_duration,
      valid_until_time;
  std::string network, subnetwork, service_account, scopes, labels, metadata, tags, description,
      range;
  bool internal_ips = false, async = false;
};

Result<json> BuildBody(Context& ctx, const QrCreateFlags& f, const std::string& zone) {
  if (f.node_id.empty() == (f.node_count == 0)) {
    return Status::InvalidArgument("exactly one of --node-id and --node-count is required");
  }
  if (f.node_count == 1 || f.node_count < 0) {
    return Status::InvalidArgument("--node-count: Node count must be greater than 1");
  }
  if (!f.node_prefix.empty() && f.node_count == 0) {
    return Status::InvalidArgument(
        "Can only specify --node-prefix if --node-count is also "
        "specified.");
  }
  if (f.accelerator_type.empty() == f.type.empty() || f.type.empty() != f.topology.empty()) {
    return Status::InvalidArgument("give --accelerator-type, or --type and --topology together");
  }
  if (f.spot + f.guaranteed + f.best_effort > 1) {
    return Status::InvalidArgument("give at most one of --spot, --guaranteed and --best-effort");
  }
  json node = {{"runtimeVersion", f.runtime_version}};
  if (!f.accelerator_type.empty()) {
    node["acceleratorType"] = f.accelerator_type;
  } else {
    std::string type = f.type;
    for (char& c : type) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (type == "V5LITEPOD" || type == "V5E") type = "V5LITE_POD";
    node["acceleratorConfig"] = {{"type", type}, {"topology", f.topology}};
  }
  node["networkConfig"] = {{"network", f.network.empty() ? "default" : f.network},
                           {"enableExternalIps", !f.internal_ips}};
  if (!f.subnetwork.empty()) node["networkConfig"]["subnetwork"] = f.subnetwork;
  if (!f.description.empty()) node["description"] = f.description;
  if (!f.range.empty()) node["cidrBlock"] = f.range;
  if (!f.tags.empty()) node["tags"] = SplitList(f.tags);
  for (auto [flag, text, field] : {std::tuple{"--labels", &f.labels, "labels"},
                                   std::tuple{"--metadata", &f.metadata, "metadata"}}) {
    Result<std::map<std::string, std::string>> map = ParseKeyValues(*text, flag);
    if (!map.ok()) return map.status();
    if (!map->empty()) node[field] = *map;
  }
  if (!f.service_account.empty() || !f.scopes.empty()) {
    node["serviceAccount"] = json::object();
    if (!f.service_account.empty()) node["serviceAccount"]["email"] = f.service_account;
    if (!f.scopes.empty()) node["serviceAccount"]["scope"] = SplitList(f.scopes);
  }
  const std::string parent = "projects/" + ctx.project + "/locations/" + zone;
  json spec = {{"parent", parent}, {"node", std::move(node)}};
  if (!f.node_id.empty()) {
    spec["nodeId"] = f.node_id;
  } else {
    spec["multisliceParams"] = {{"nodeCount", f.node_count}};
    if (!f.node_prefix.empty()) spec["multisliceParams"]["nodeIdPrefix"] = f.node_prefix;
  }
  json body = {{"tpu", {{"nodeSpec", json::array({std::move(spec)})}}}};
  if (f.spot) body["spot"] = json::object();
  if (f.guaranteed) body["guaranteed"] = json::object();
  if (f.best_effort) body["bestEffort"] = json::object();
  if (f.reserved) body["reservationName"] = parent + "/reservations/-";
  if (!f.reservation.empty()) {
    body["reservationName"] = f.reservation.find('/') == std::string::npos
                                  ? parent + "/reservations/" + f.reservation
                                  : f.reservation;
  }
  // gcloud: one start and one end at most; both together become validInterval.
  if ((!f.valid_after_duration.empty() && !f.valid_after_time.empty()) ||
      (!f.valid_until_duration.empty() && !f.valid_until_time.empty())) {
    return Status::InvalidArgument(
        "Only one timing constraint for each of (start, end) time is permitted");
  }
  json policy = json::object();
  std::string start = f.valid_after_time, end = f.valid_until_time;
  for (auto [flag, text, field] :
       {std::tuple{"--valid-after-duration", &f.valid_after_duration, "validAfterDuration"},
        std::tuple{"--valid-until-duration", &f.valid_until_duration, "validUntilDuration"}}) {
    if (text->empty()) continue;
    Result<int64_t> seconds = DurationSeconds(*text, flag);
    if (!seconds.ok()) return seconds.status();
    policy[field] = std::to_string(*seconds) + "s";
    (std::string(field) == "validAfterDuration" ? start : end) = TimeIn(*seconds);
  }
  if (!f.valid_after_time.empty()) policy["validAfterTime"] = f.valid_after_time;
  if (!f.valid_until_time.empty()) policy["validUntilTime"] = f.valid_until_time;
  if (!start.empty() && !end.empty()) {
    policy = {{"validInterval", {{"startTime", start}, {"endTime", end}}}};
  }
  if (!policy.empty()) body["queueingPolicy"] = std::move(policy);
  return body;
}

int CreateQueuedResource(Context& ctx, const QrCreateFlags& f) {
  if (f.ref.id.find('/') != std::string::npos) {
    return ctx.UsageError("QUEUED_RESOURCE must be an id, not a resource name");
  }
  std::string zone = ctx.ZoneOrDefault(f.ref.zone);
  if (zone.empty()) return ctx.UsageError("--zone is required (or set TPUEMU_ZONE)");
  Result<json> body = BuildBody(ctx, f, zone);
  if (!body.ok()) return ctx.UsageError(body.status().message());
  Result<json> op = ctx.api->Call(
      "POST", ctx.ZonePath(zone) + "/queuedResources?queuedResourceId=" + UrlEncode(f.ref.id),
      *body);
  return Finish(ctx, op, f.async, f.ref.id, "Created queued resource", DefaultColumns(kQrColumns));
}

void AddCreate(CLI::App& qr, Context& ctx) {
  auto f = std::make_shared<QrCreateFlags>();
  CLI::App* c = AddRefCommand(qr, "create", "Create a queued resource", "QUEUED_RESOURCE", f->ref);
  c->add_option("--node-id", f->node_id, "Id of the one node to create");
  c->add_option("--node-count", f->node_count, "Number of nodes (multislice; more than 1)");
  c->add_option("--node-prefix", f->node_prefix,
                "Node id prefix (default: the queued resource id)");
  c->add_option("--accelerator-type", f->accelerator_type, "Accelerator type, e.g. v5litepod-16");
  c->add_option("--type", f->type, "TPU generation (with --topology)");
  c->add_option("--topology", f->topology, "Chip topology, e.g. 2x4 (with --type)");
  c->add_option("--runtime-version", f->runtime_version, "Runtime version")->required();
  c->add_flag("--spot", f->spot, "Spot tier (preemptible)");
  c->add_flag("--guaranteed", f->guaranteed, "Guaranteed tier");
  c->add_flag("--best-effort", f->best_effort, "Best-effort tier (v2alpha1's)");
  c->add_flag("--reserved", f->reserved, "Provision in any reservation of the project");
  c->add_option("--reservation", f->reservation, "Provision in this reservation");
  c->add_option("--valid-after-duration", f->valid_after_duration, "Not before, e.g. 30m");
  c->add_option("--valid-after-time", f->valid_after_time, "Not before, RFC 3339");
  c->add_option("--valid-until-duration", f->valid_until_duration, "Give up after, e.g. 2h");
  c->add_option("--valid-until-time", f->valid_until_time, "Give up at, RFC 3339");
  c->add_option("--network", f->network, "Network (default: default)");
  c->add_option("--subnetwork", f->subnetwork, "Subnetwork");
  c->add_flag("--internal-ips", f->internal_ips, "No external IPs");
  c->add_option("--service-account", f->service_account, "Service account email");
  c->add_option("--scopes", f->scopes, "SCOPE,...");
  c->add_option("--labels", f->labels, "KEY=VALUE,...");
  c->add_option("--metadata", f->metadata, "KEY=VALUE,...");
  c->add_option("--tags", f->tags, "TAG,...");
  c->add_option("--description", f->description, "Description");
  c->add_option("--range", f->range, "CIDR block");
  c->add_flag("--async", f->async, "Return the Operation without waiting");
  c->callback([&ctx, f] { ctx.action = [&ctx, f] { return CreateQueuedResource(ctx, *f); }; });
}

void AddQueuedResourceCommands(CLI::App& tpus, Context& ctx) {
  CLI::App* qr = tpus.add_subcommand("queued-resources", "Queued resources")->require_subcommand(1);
  AddCreate(*qr, ctx);

  auto list_zone = std::make_shared<std::string>();
  CLI::App* l = qr->add_subcommand("list", "List queued resources");
  l->add_option("--zone", *list_zone, "Zone, or - for every zone (default: TPUEMU_ZONE)");
  l->callback([&ctx, list_zone] {
    ctx.action = [&ctx, list_zone] {
      std::string zone = ctx.ZoneOrDefault(*list_zone);
      if (zone.empty()) return ctx.UsageError("--zone is required (or set TPUEMU_ZONE)");
      Result<json> items = ctx.ListAll(ctx.ZonePath(zone) + "/queuedResources", "queuedResources");
      if (!items.ok()) return ctx.Fail(items.status());
      ctx.PrintList(*items, DefaultColumns(kQrColumns));
      return kExitOk;
    };
  });

  auto describe = std::make_shared<Ref>();
  AddRefCommand(*qr, "describe", "Describe a queued resource", "QUEUED_RESOURCE", *describe)
      ->callback([&ctx, describe] {
        ctx.action = [&ctx, describe] {
          Result<std::string> name = Name(ctx, *describe, "queuedResources");
          if (!name.ok()) return ctx.UsageError(name.status().message());
          Result<json> item = ctx.api->Get("/v2/" + *name);
          if (!item.ok()) return ctx.Fail(item.status());
          ctx.PrintOne(*item, DefaultColumns(kQrColumns));
          return kExitOk;
        };
      });

  auto del = std::make_shared<Ref>();
  auto force = std::make_shared<bool>(false);
  auto del_async = std::make_shared<bool>(false);
  CLI::App* d = AddRefCommand(*qr, "delete", "Delete a queued resource", "QUEUED_RESOURCE", *del);
  d->add_flag("--force", *force, "Delete its nodes first");
  d->add_flag("--async", *del_async, "Return the Operation without waiting");
  d->callback([&ctx, del, force, del_async] {
    ctx.action = [&ctx, del, force, del_async] {
      Result<std::string> name = Name(ctx, *del, "queuedResources");
      if (!name.ok()) return ctx.UsageError(name.status().message());
      Result<json> op = ctx.api->Call("DELETE", "/v2/" + *name + (*force ? "?force=true" : ""));
      return Finish(ctx, op, *del_async, del->id, "Deleted queued resource", {});
    };
  });

  auto reset = std::make_shared<Ref>();
  auto reset_async = std::make_shared<bool>(false);
  CLI::App* r = AddRefCommand(*qr, "reset", "Reset a SUSPENDED or FAILED queued resource",
                              "QUEUED_RESOURCE", *reset);
  r->add_flag("--async", *reset_async, "Return the Operation without waiting");
  r->callback([&ctx, reset, reset_async] {
    ctx.action = [&ctx, reset, reset_async] {
      Result<std::string> name = Name(ctx, *reset, "queuedResources");
      if (!name.ok()) return ctx.UsageError(name.status().message());
      Result<json> op = ctx.api->Call("POST", "/v2/" + *name + ":reset", json::object());
      return Finish(ctx, op, *reset_async, reset->id, "Reset queued resource",
                    DefaultColumns(kQrColumns));
    };
  });

  auto pm = std::make_shared<Ref>();
  auto pm_nodes = std::make_shared<std::string>();
  auto pm_async = std::make_shared<bool>(false);
  CLI::App* m = AddRefCommand(*qr, "perform-maintenance",
                              "Maintenance on a queued resource's nodes", "QUEUED_RESOURCE", *pm);
  m->add_option("--node-names", *pm_nodes, "NODE,... (default: every node)");
  m->add_flag("--async", *pm_async, "Return the Operation without waiting");
  m->callback([&ctx, pm, pm_nodes, pm_async] {
    ctx.action = [&ctx, pm, pm_nodes, pm_async] {
      Result<std::string> name = Name(ctx, *pm, "queuedResources");
      if (!name.ok()) return ctx.UsageError(name.status().message());
      Result<json> op =
          ctx.api->Call("POST", "/v2alpha1/" + *name + ":performMaintenanceQueuedResource",
                        json{{"nodeNames", SplitList(*pm_nodes)}});
      return Finish(ctx, op, *pm_async, pm->id, "Performed maintenance on queued resource", {});
    };
  });
}

void AddOperationCommands(CLI::App& tpus, Context& ctx) {
  CLI::App* ops =
      tpus.add_subcommand("operations", "Long-running operations")->require_subcommand(1);
  auto list_zone = std::make_shared<std::string>();
  CLI::App* l = ops->add_subcommand("list", "List operations");
  l->add_option("--zone", *list_zone, "Zone, or - for every zone (default: TPUEMU_ZONE)");
  l->callback([&ctx, list_zone] {
    ctx.action = [&ctx, list_zone] {
      std::string zone = ctx.ZoneOrDefault(*list_zone);
      if (zone.empty()) return ctx.UsageError("--zone is required (or set TPUEMU_ZONE)");
      Result<json> items = ctx.ListAll(ctx.ZonePath(zone) + "/operations", "operations");
      if (!items.ok()) return ctx.Fail(items.status());
      ctx.PrintList(*items, DefaultColumns(kOperationColumns));
      return kExitOk;
    };
  });
  auto describe = std::make_shared<Ref>();
  AddRefCommand(*ops, "describe", "Describe an operation", "OPERATION", *describe)
      ->callback([&ctx, describe] {
        ctx.action = [&ctx, describe] {
          Result<std::string> name = Name(ctx, *describe, "operations");
          if (!name.ok()) return ctx.UsageError(name.status().message());
          Result<json> op = ctx.api->Get("/v2/" + *name);
          if (!op.ok()) return ctx.Fail(op.status());
          ctx.PrintOne(*op, DefaultColumns(kOperationColumns));
          return kExitOk;
        };
      });
}

}  // namespace

void AddMaintenanceCommands(CLI::App& tpu_vm, Context& ctx) {
  auto sim = std::make_shared<Ref>();
  auto workers = std::make_shared<std::string>();
  auto sim_async = std::make_shared<bool>(false);
  CLI::App* s = AddRefCommand(tpu_vm, "simulate-maintenance-event",
                              "Simulate a maintenance event on a TPU VM's workers", "TPU", *sim);
  s->add_option("--workers", *workers, "Worker ids, e.g. 0,1 (default: worker 0)");
  s->add_flag("--async", *sim_async, "Return the Operation without waiting");
  s->callback([&ctx, sim, workers, sim_async] {
    ctx.action = [&ctx, sim, workers, sim_async] {
      Result<std::string> name = Name(ctx, *sim, "nodes");
      if (!name.ok()) return ctx.UsageError(name.status().message());
      Result<json> op = ctx.api->Call("POST", "/v2alpha1/" + *name + ":simulateMaintenanceEvent",
                                      json{{"workerIds", SplitList(*workers)}});
      return Finish(ctx, op, *sim_async, sim->id, "Simulated maintenance event on tpu", {});
    };
  });
  auto perform = std::make_shared<Ref>();
  auto perform_async = std::make_shared<bool>(false);
  CLI::App* p = AddRefCommand(tpu_vm, "perform-maintenance", "Perform maintenance on a TPU VM now",
                              "TPU", *perform);
  p->add_flag("--async", *perform_async, "Return the Operation without waiting");
  p->callback([&ctx, perform, perform_async] {
    ctx.action = [&ctx, perform, perform_async] {
      Result<std::string> name = Name(ctx, *perform, "nodes");
      if (!name.ok()) return ctx.UsageError(name.status().message());
      Result<json> op =
          ctx.api->Call("POST", "/v2alpha1/" + *name + ":performMaintenance", json::object());
      return Finish(ctx, op, *perform_async, perform->id, "Performed maintenance on tpu", {});
    };
  });
}

void AddQueuedResourceAndOperationCommands(CLI::App& tpus, Context& ctx) {
  AddQueuedResourceCommands(tpus, ctx);
  AddOperationCommands(tpus, ctx);
}

}  // namespace tpuemu::cli
