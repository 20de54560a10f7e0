// `tpuctl compute tpus tpu-vm ssh|scp` and `tpuctl compute tpus queued-resources ssh`: gcloud's
// flags and behaviour on OpenSSH's ssh/scp (README "SSH into a TPU VM"). The key is
// ~/.ssh/google_compute_engine (made with ssh-keygen when missing); when the node's metadata
// (or the project's commonInstanceMetadata) lacks "USER:ssh-rsa … USER", the node's `ssh-keys`
// gets it (PATCH updateMask=metadata, waited on) and ssh is retried on exit 255 while the
// workers pick it up. Several workers run in parallel, one ssh each, output as it comes; the
// exit code is the first non-zero one in worker order. Command lines: cli/tpuctl/ssh_args.h.
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include <CLI/CLI.hpp>

#include "cli/tpuctl/app.h"
#include "cli/tpuctl/operation_wait.h"
#include "cli/tpuctl/ssh_args.h"
#include "cli/tpuctl/subprocess.h"

namespace tpuemu::cli {
namespace {

using nlohmann::json;

constexpr int kSshError = 255;            // ssh's own failure (not the remote command's)
constexpr int kAttemptsAfterNewKey = 10;  // gcloud's max_attempts while a new key propagates

struct SshFlags {
  std::string tpu;  // [USER@]TPU, or the queued resource id
  std::string zone;
  std::string worker = "0";
  std::string node = "0";  // queued-resources ssh only
  std::string command;
  CLI::Option* command_option = nullptr;  // count() tells --command "" from not given
  std::vector<std::string> ssh_flags;
  bool internal_ip = false, dry_run = false;
};

struct ScpFlags {
  std::vector<std::string> paths;  // SRC… DEST
  std::string zone;
  std::string worker = "0";
  std::vector<std::string> scp_flags;
  bool recurse = false, internal_ip = false, dry_run = false;
};

// Who we are locally and where our key lives.
struct Identity {
  std::string user;
  std::string key_file;
  std::string known_hosts;
};

Identity LocalIdentity(const std::string& user_flag) {
  Identity id;
  const passwd* pw = getpwuid(getuid());
  const char* user = std::getenv("USER");
  id.user = !user_flag.empty()                 ? user_flag
            : user != nullptr && *user != '\0' ? std::string(user)
            : pw != nullptr                    ? std::string(pw->pw_name)
                                               : std::string("user");
  const char* home = std::getenv("HOME");
  std::string dir = home != nullptr && *home != '\0' ? home : pw != nullptr ? pw->pw_dir : "/tmp";
  id.key_file = dir + "/.ssh/google_compute_engine";
  id.known_hosts = dir + "/.ssh/google_compute_known_hosts";
  return id;
}

// The public key ("ssh-rsa AAAA…"), making the key pair first when it is missing (gcloud's
// `ssh-keygen -t rsa -N ''`; its chatter goes to stderr so stdout stays the remote's).
Result<std::string> EnsureKey(Context& ctx, const Identity& id) {
  const std::string pub = id.key_file + ".pub";
  if (access(id.key_file.c_str(), R_OK) != 0 || access(pub.c_str(), R_OK) != 0) {
    const std::string dir = id.key_file.substr(0, id.key_file.find_last_of('/'));
    mkdir(dir.c_str(), 0700);
    ctx.Note("WARNING: The private SSH key file for tpuctl does not exist.");
    ctx.Note("WARNING: You do not have an SSH key for tpuctl.");
    ctx.Note("WARNING: SSH keygen will be executed to generate a key.");
    ctx.err->flush();
    std::remove(id.key_file.c_str());
    std::remove(pub.c_str());
    int rc = RunProcess({"ssh-keygen", "-t", "rsa", "-N", "", "-f", id.key_file, "-C", id.user},
                        /*inherit_stdin=*/false, STDERR_FILENO);
    if (rc != 0) {
      return Status::FailedPrecondition("ssh-keygen failed (exit " + std::to_string(rc) +
                                        ") making " + id.key_file);
    }
  }
  std::ifstream in(pub);
  std::stringstream text;
  text << in.rdbuf();
  std::string key = PublicKeyOf(text.str());
  if (key.empty()) return Status::FailedPrecondition(pub + " is not an SSH public key");
  return key;
}

Result<std::string> ResourceName(Context& ctx, const std::string& id, const std::string& zone_flag,
                                 const std::string& collection) {
  if (id.find('/') != std::string::npos) return id;
  std::string zone = ctx.ZoneOrDefault(zone_flag);
  if (zone.empty()) return Status::InvalidArgument("--zone is required (or set TPUEMU_ZONE)");
  return "projects/" + ctx.project + "/locations/" + zone + "/" + collection + "/" + id;
}

std::string NodeIdOf(const std::string& name) { return name.substr(name.find_last_of('/') + 1); }

// The node, if it can be connected to (gcloud's ValidateTPUState, then the sandbox).
Result<json> UsableNode(Context& ctx, const std::string& name) {
  Result<json> node = ctx.api->Get("/v2/" + name);
  if (!node.ok()) return node.status();
  const std::string state = node->value("state", std::string("STATE_UNSPECIFIED"));
  if (state == "STOPPED" || state == "STOPPING" || state == "DELETING" || state == "HIDDEN") {
    return Status::FailedPrecondition("This TPU has state \"" + state +
                                      "\", so it cannot be currently connected to.");
  }
  if (state == "PREEMPTED" || state == "TERMINATED") {
    return Status::FailedPrecondition("This TPU has terminal state \"" + state +
                                      "\", so it cannot be used anymore.");
  }
  if (state != "READY") {
    ctx.Note("WARNING: The TPU VM is in state \"" + state +
             "\", therefore the TPU may not be available or reachable. If the connection "
             "fails, please try again later.");
  }
  // No workerSandbox at all: this tpuemud runs without sandboxes (--worker-sandboxes off).
  const json sandbox = node->value("workerSandbox", json::object());
  if (!sandbox.is_object() || !sandbox.value("enabled", false)) {
    std::string reason = sandbox.is_object() ? sandbox.value("reason", std::string()) : "";
    if (reason.empty()) {
      reason =
          "tpuemud runs it without worker sandboxes (they need root and --worker-sandboxes "
          "auto)";
    }
    return Status::FailedPrecondition("TPU VM [" + NodeIdOf(name) +
                                      "] has no worker sandboxes to connect to: " + reason);
  }
  if (!node->contains("networkEndpoints") || !(*node)["networkEndpoints"].is_array() ||
      (*node)["networkEndpoints"].empty()) {
    return Status::FailedPrecondition("TPU VM [" + NodeIdOf(name) +
                                      "] has no network endpoints yet (state " + state + ")");
  }
  return node;
}

// gcloud's AddSSHKeyIfNeeded: true when the node's metadata had to be changed.
Result<bool> PropagateKey(Context& ctx, const std::string& name, const json& node,
                          const std::string& user, const std::string& public_key) {
  json metadata = node.value("metadata", json::object());
  if (!metadata.is_object()) metadata = json::object();
  const std::string node_keys = metadata.value("ssh-keys", std::string());
  if (SshKeysHave(node_keys, user, public_key)) return false;
  std::string block = metadata.value("block-project-ssh-keys", std::string());
  for (char& c : block) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (block != "TRUE") {
    // An error here (an older tpuemud without the Compute API) only means: add it to the node.
    Result<json> project = ctx.api->Get("/compute/v1/projects/" + ctx.project);
    if (project.ok()) {
      const json items =
          project->value("commonInstanceMetadata", json::object()).value("items", json::array());
      for (const json& item : items) {
        const std::string key = item.value("key", std::string());
        if ((key == "ssh-keys" || key == "sshKeys") &&
            SshKeysHave(item.value("value", std::string()), user, public_key)) {
          ctx.Note("SSH key found in project metadata; not updating instance.");
          return false;
        }
      }
    }
  }
  const std::string line = SshKeysLine(user, public_key);
  metadata["ssh-keys"] = node_keys.empty() ? line : node_keys + "\n" + line;
  ctx.Note("Updating instance ssh metadata...");
  Result<json> op =
      ctx.api->Call("PATCH", "/v2/" + name + "?updateMask=metadata", json{{"metadata", metadata}});
  // As gcloud: an update already in flight (409) is not a failure of the ssh.
  if (!op.ok() && op.status().code() != StatusCode::kAborted &&
      op.status().code() != StatusCode::kAlreadyExists) {
    return op.status();
  }
  if (op.ok()) {
    Result<json> done = WaitForOperation(ctx, *op);
    if (!done.ok()) return done.status();
  }
  return true;
}

// One ssh/scp process to run (with retries) for one worker.
struct Run {
  std::string label;  // "worker 1", or "node n-0 worker 1"
  std::vector<std::string> argv;
};

// Runs every argv in parallel (one thread each, stdin shared only when there is one), retrying a
// run that exits 255 up to `attempts` times 1 s apart. Returns the first non-zero exit code in
// `runs` order, 0 when all succeeded.
int RunAll(Context& ctx, const std::string& what, const std::vector<Run>& runs, int attempts) {
  ctx.out->flush();
  ctx.err->flush();
  std::mutex err_mu;
  auto note = [&](const std::string& line) {
    std::lock_guard<std::mutex> lock(err_mu);
    *ctx.err << line << "\n" << std::flush;
  };
  const bool several = runs.size() > 1;
  std::vector<int> codes(runs.size(), 0);
  auto run_one = [&](size_t i) {
    for (int attempt = 1;; ++attempt) {
      note(what + ": Attempting to connect to " + runs[i].label + "...");
      codes[i] = RunProcess(runs[i].argv, /*inherit_stdin=*/!several);
      if (codes[i] != kSshError || attempt >= attempts) break;
      note("Retrying: " + what + " command error: exit status 255 (the key may still be " +
           "propagating)");
      // Waiting between two ssh attempts for the key to reach the worker (gcloud does too).
      std::this_thread::sleep_for(std::chrono::seconds(1));
    }
    if (several && codes[i] != 0) {
      note("##### Command execution on " + runs[i].label + " failed with exit status " +
           std::to_string(codes[i]) + ". Continuing.");
    }
  };
  if (!several) {
    run_one(0);
  } else {
    std::vector<std::thread> threads;
    for (size_t i = 0; i < runs.size(); ++i) threads.emplace_back(run_one, i);
    for (std::thread& t : threads) t.join();
  }
  for (int code : codes) {
    if (code != 0) return code;
  }
  return kExitOk;
}

// One node's workers to reach.
struct NodeWorkers {
  std::string name;
  json node;
  std::vector<int> workers;
};

SshTarget TargetOf(const NodeWorkers& n, int worker, const std::string& user) {
  const json& ep = n.node["networkEndpoints"][worker];
  SshTarget t;
  t.user = user;
  // A sandboxed worker is reached at its external address, a loopback address of tpuemud's host
  // (its internal one exists only on its slice's private network); a node without sandboxes has
  // no machine to reach, and its external addresses are not routable, so its internal one is
  // shown. (--internal-ip is accepted for gcloud's sake and changes nothing.)
  const bool sandboxed = n.node.contains("workerSandbox") && n.node["workerSandbox"].is_object() &&
                         n.node["workerSandbox"].value("enabled", false);
  const json access = ep.value("accessConfig", json::object());
  t.host = sandboxed && access.contains("externalIp") ? access.value("externalIp", std::string())
                                                      : ep.value("ipAddress", std::string());
  t.port = SshPortOf(ep);
  // Addresses come back with new nodes (new host keys): pin known_hosts entries to this node.
  t.host_key_alias = "tpu." + n.node.value("id", NodeIdOf(n.name)) + "-" + std::to_string(worker);
  return t;
}

// Key, propagation to every node, then the runs (or, with --dry-run, their command lines).
int Connect(Context& ctx, const std::string& what, const std::vector<NodeWorkers>& nodes,
            const Identity& id, bool dry_run,
            const std::function<std::vector<std::string>(const SshTarget&)>& argv_for) {
  std::vector<Run> runs;
  for (const NodeWorkers& n : nodes) {
    for (int w : n.workers) {
      std::string label = "worker " + std::to_string(w);
      if (nodes.size() > 1) label = "node " + NodeIdOf(n.name) + " " + label;
      runs.push_back({label, argv_for(TargetOf(n, w, id.user))});
    }
  }
  if (dry_run) {
    for (const Run& r : runs) *ctx.out << ShellJoin(r.argv) << "\n";
    return kExitOk;
  }
  Result<std::string> key = EnsureKey(ctx, id);
  if (!key.ok()) return ctx.Fail(key.status());
  bool added = false;
  for (const NodeWorkers& n : nodes) {
    Result<bool> changed = PropagateKey(ctx, n.name, n.node, id.user, *key);
    if (!changed.ok()) return ctx.Fail(changed.status());
    added = added || *changed;
  }
  return RunAll(ctx, what, runs, added ? kAttemptsAfterNewKey : 1);
}

SshOptions OptionsFor(const Identity& id, const std::vector<std::string>& flags, bool tty) {
  SshOptions o;
  o.key_file = id.key_file;
  o.known_hosts_file = id.known_hosts;
  o.extra_flags = flags;
  o.tty = tty;
  return o;
}

std::optional<std::string> CommandOf(const SshFlags& f) {
  if (f.command_option->count() == 0) return std::nullopt;
  return f.command;
}

// Selects workers of `node`; several need --command (gcloud's rule).
Result<std::vector<int>> SelectWorkers(const json& node, const std::string& worker_flag,
                                       bool have_command) {
  Result<std::vector<int>> workers =
      ParseIndexList(worker_flag, static_cast<int>(node["networkEndpoints"].size()), "--worker");
  if (!workers.ok()) return workers.status();
  if (workers->size() > 1 && !have_command) {
    return Status::InvalidArgument(
        "Invalid value for [--worker]: cannot target multiple workers without the `--command` "
        "flag.");
  }
  return workers;
}

int Ssh(Context& ctx, const SshFlags& f) {
  auto [user, tpu] = SplitUserAt(f.tpu);
  Result<std::string> name = ResourceName(ctx, tpu, f.zone, "nodes");
  if (!name.ok()) return ctx.UsageError(name.status().message());
  Result<json> node = UsableNode(ctx, *name);
  if (!node.ok()) return ctx.Fail(node.status());
  const std::optional<std::string> command = CommandOf(f);
  Result<std::vector<int>> workers = SelectWorkers(*node, f.worker, command.has_value());
  if (!workers.ok()) return ctx.UsageError(workers.status().message());
  const Identity id = LocalIdentity(user);
  const SshOptions options =
      OptionsFor(id, f.ssh_flags, !command && isatty(STDIN_FILENO) && isatty(STDOUT_FILENO));
  return Connect(ctx, "SSH", {{*name, *node, *workers}}, id, f.dry_run,
                 [&](const SshTarget& t) { return BuildSshArgv(options, t, command); });
}

int Scp(Context& ctx, const ScpFlags& f) {
  if (f.paths.size() < 2) return ctx.UsageError("scp needs SRC… DEST");
  std::vector<ScpPath> sources;
  for (size_t i = 0; i + 1 < f.paths.size(); ++i) sources.push_back(ParseScpPath(f.paths[i]));
  const ScpPath destination = ParseScpPath(f.paths.back());
  Result<ScpTarget> target = CheckScpPaths(sources, destination);
  if (!target.ok()) return ctx.UsageError(target.status().message());
  Result<std::string> name = ResourceName(ctx, target->tpu, f.zone, "nodes");
  if (!name.ok()) return ctx.UsageError(name.status().message());
  Result<json> node = UsableNode(ctx, *name);
  if (!node.ok()) return ctx.Fail(node.status());
  Result<std::vector<int>> workers =
      ParseIndexList(f.worker, static_cast<int>((*node)["networkEndpoints"].size()), "--worker");
  if (!workers.ok()) return ctx.UsageError(workers.status().message());
  const Identity id = LocalIdentity(target->user);
  const SshOptions options = OptionsFor(id, f.scp_flags, false);
  return Connect(ctx, "SCP", {{*name, *node, *workers}}, id, f.dry_run, [&](const SshTarget& t) {
    return BuildScpArgv(options, t, sources, destination, f.recurse);
  });
}

// The node names of a queued resource, in nodeSpec order (multislice specs expand to
// PREFIX-0 … PREFIX-(nodeCount-1), PREFIX defaulting to the queued resource id).
std::vector<std::string> QueuedResourceNodes(const json& qr, const std::string& qr_name) {
  std::vector<std::string> names;
  const json specs = qr.value("tpu", json::object()).value("nodeSpec", json::array());
  for (const json& spec : specs) {
    const std::string parent =
        spec.value("parent", qr_name.substr(0, qr_name.find("/queuedResources/")));
    if (spec.contains("nodeId")) {
      names.push_back(parent + "/nodes/" + spec.value("nodeId", std::string()));
      continue;
    }
    const json params = spec.value("multisliceParams", json::object());
    const std::string prefix = params.value("nodeIdPrefix", NodeIdOf(qr_name));
    const int count = params.value("nodeCount", 0);
    for (int i = 0; i < count; ++i) {
      names.push_back(parent + "/nodes/" + prefix + "-" + std::to_string(i));
    }
  }
  return names;
}

int QueuedResourceSsh(Context& ctx, const SshFlags& f) {
  auto [user, qr_id] = SplitUserAt(f.tpu);
  Result<std::string> qr_name = ResourceName(ctx, qr_id, f.zone, "queuedResources");
  if (!qr_name.ok()) return ctx.UsageError(qr_name.status().message());
  Result<json> qr = ctx.api->Get("/v2/" + *qr_name);
  if (!qr.ok()) return ctx.Fail(qr.status());
  const std::string state =
      qr->value("state", json::object()).value("state", std::string("STATE_UNSPECIFIED"));
  if (state != "ACTIVE") {
    return ctx.Fail(
        Status::FailedPrecondition("Queued resource [" + NodeIdOf(*qr_name) + "] is in state \"" +
                                   state + "\"; its nodes can be connected to once it is ACTIVE."));
  }
  const std::vector<std::string> all = QueuedResourceNodes(*qr, *qr_name);
  Result<std::vector<int>> picked = ParseIndexList(f.node, static_cast<int>(all.size()), "--node");
  if (!picked.ok()) return ctx.UsageError(picked.status().message());
  const std::optional<std::string> command = CommandOf(f);
  std::vector<NodeWorkers> nodes;
  for (int i : *picked) {
    Result<json> node = UsableNode(ctx, all[i]);
    if (!node.ok()) return ctx.Fail(node.status());
    Result<std::vector<int>> workers = SelectWorkers(*node, f.worker, command.has_value());
    if (!workers.ok()) return ctx.UsageError(workers.status().message());
    nodes.push_back({all[i], *node, *workers});
  }
  if (nodes.size() > 1 && !command) {
    return ctx.UsageError(
        "Invalid value for [--node]: cannot target multiple nodes without the `--command` "
        "flag.");
  }
  const Identity id = LocalIdentity(user);
  const SshOptions options =
      OptionsFor(id, f.ssh_flags, !command && isatty(STDIN_FILENO) && isatty(STDOUT_FILENO));
  return Connect(ctx, "SSH", nodes, id, f.dry_run,
                 [&](const SshTarget& t) { return BuildSshArgv(options, t, command); });
}

void AddSshFlags(CLI::App& cmd, SshFlags& f) {
  cmd.add_option("--zone", f.zone, "Zone (default: TPUEMU_ZONE)");
  cmd.add_option("--worker", f.worker,
                 "Worker(s): an index (default 0), 1,4,6, 1-3 or all (several need --command)");
  f.command_option =
      cmd.add_option("--command", f.command, "Run this command on the worker(s) and exit");
  // One value per --ssh-flag (write --ssh-flag=-v for a value that starts with '-').
  cmd.add_option("--ssh-flag", f.ssh_flags, "An extra ssh flag (repeatable), e.g. '-L 8080:…'")
      ->allow_extra_args(false);
  cmd.add_flag("--internal-ip", f.internal_ip,
               "Use the internal addresses (tpuemud's workers have only those)");
  cmd.add_flag("--dry-run", f.dry_run, "Print the ssh command line(s) instead of running them");
}

}  // namespace

void AddSshCommands(CLI::App& tpu_vm, CLI::App& queued_resources, Context& ctx) {
  auto ssh = std::make_shared<SshFlags>();
  CLI::App* s = tpu_vm.add_subcommand("ssh", "SSH into a TPU VM's worker(s)");
  s->add_option("TPU", ssh->tpu, "[USER@]TPU: the TPU VM (user default: $USER)")->required();
  AddSshFlags(*s, *ssh);
  s->callback([&ctx, ssh] { ctx.action = [&ctx, ssh] { return Ssh(ctx, *ssh); }; });

  auto scp = std::make_shared<ScpFlags>();
  CLI::App* c = tpu_vm.add_subcommand("scp", "Copy files to or from a TPU VM's worker(s)");
  c->add_option("SRC_DEST", scp->paths,
                "SRC… DEST; remote paths are [USER@]TPU:PATH (all sources local and DEST "
                "remote, or the other way round)")
      ->required()
      ->expected(2, -1);
  c->add_option("--zone", scp->zone, "Zone (default: TPUEMU_ZONE)");
  c->add_option("--worker", scp->worker, "Worker(s): an index (default 0), 1,4,6, 1-3 or all");
  c->add_flag("--recurse", scp->recurse, "Copy directories recursively");
  c->add_option("--scp-flag", scp->scp_flags, "An extra scp flag (repeatable)")
      ->allow_extra_args(false);
  c->add_flag("--internal-ip", scp->internal_ip,
              "Use the internal addresses (tpuemud's workers have only those)");
  c->add_flag("--dry-run", scp->dry_run, "Print the scp command line(s) instead of running them");
  c->callback([&ctx, scp] { ctx.action = [&ctx, scp] { return Scp(ctx, *scp); }; });

  auto qr = std::make_shared<SshFlags>();
  CLI::App* q = queued_resources.add_subcommand("ssh", "SSH into a queued resource's node(s)");
  q->add_option("QUEUED_RESOURCE", qr->tpu, "[USER@]QUEUED_RESOURCE")->required();
  q->add_option("--node", qr->node,
                "Node(s) by index in the queued resource: 0 (default), 0,2, 0-1 or all");
  AddSshFlags(*q, *qr);
  q->callback([&ctx, qr] { ctx.action = [&ctx, qr] { return QueuedResourceSsh(ctx, *qr); }; });
}

}  // namespace tpuemu::cli
