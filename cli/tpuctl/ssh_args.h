// The pure half of `tpuctl compute tpus tpu-vm ssh|scp` and `queued-resources ssh`: gcloud's
// --worker / --node lists, scp's [USER@]TPU:PATH arguments, the OpenSSH command lines, and the
// `ssh-keys` metadata checks (gcloud's command_lib/compute/tpus/tpu_vm/ssh_utils.py does the
// same). Nothing here touches a process, a file or the network, so the tests call it directly.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace tpuemu::cli {

// gcloud's --worker (flag "--worker") and --node (flag "--node") values: "all", "1,4,6",
// "1-3" or a mix ("0,2-3"), over `count` items. Returns the sorted, distinct indexes;
// INVALID_ARGUMENT naming `flag` on a malformed item, a range whose start is not below its end,
// an empty list, or an index >= `count` (gcloud's messages).
Result<std::vector<int>> ParseIndexList(const std::string& text, int count,
                                        const std::string& flag);

// One scp argument. A remote one is "[USER@]TPU:PATH" where TPU has no '/' (so "./a:b" and
// "/x:y" stay local, as in gcloud's scp).
struct ScpPath {
  bool remote = false;
  std::string user;  // "" = the default user
  std::string tpu;   // remote only
  std::string path;  // the local path, or the remote path after ':'
};
ScpPath ParseScpPath(const std::string& arg);

// Checks scp's arguments as gcloud does: either every source is local and the destination
// remote, or every source remote (one TPU, one user) and the destination local. Returns the
// one TPU and user named; INVALID_ARGUMENT otherwise.
struct ScpTarget {
  std::string tpu;
  std::string user;  // "" = the default user
  bool upload = true;
};
Result<ScpTarget> CheckScpPaths(const std::vector<ScpPath>& sources, const ScpPath& destination);

// "[USER@]TPU" -> {user, tpu}.
std::pair<std::string, std::string> SplitUserAt(const std::string& arg);

// What every ssh/scp command line of one run shares.
struct SshOptions {
  std::string key_file;          // -i, e.g. /home/u/.ssh/google_compute_engine
  std::string known_hosts_file;  // UserKnownHostsFile, e.g. ~/.ssh/google_compute_known_hosts
  std::vector<std::string> extra_flags;  // --ssh-flag / --scp-flag, each split on spaces
  bool tty = false;                      // ssh -t (an interactive session on a terminal)
};

// One worker to reach.
struct SshTarget {
  std::string user;
  std::string host;            // the worker's address
  int port = 0;                // 0 = ssh's default (22)
  std::string host_key_alias;  // "" = none; else HostKeyAlias (addresses are reused by nodes)
};

// The SSH port a networkEndpoints[i] entry means: its `port` unless that is absent, 8470 (the
// TPU runtime's port: SSH is on 22) or 22; 0 = the default.
int SshPortOf(const nlohmann::json& endpoint);

// ssh [-t] -i KEY -o CheckHostIP=no -o HashKnownHosts=no [-o HostKeyAlias=A]
//     -o IdentitiesOnly=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=F [-p PORT]
//     [FLAGS...] USER@HOST [-- COMMAND]
std::vector<std::string> BuildSshArgv(const SshOptions& options, const SshTarget& target,
                                      const std::optional<std::string>& command);

// scp -i KEY -o ... [-P PORT] [-r] [FLAGS...] SRC... DEST, the remote side as USER@HOST:PATH.
std::vector<std::string> BuildScpArgv(const SshOptions& options, const SshTarget& target,
                                      const std::vector<ScpPath>& sources,
                                      const ScpPath& destination, bool recurse);

// The argv as one line a shell reads back to the same words (--dry-run prints it).
std::string ShellJoin(const std::vector<std::string>& argv);

// "ssh-rsa AAAA… comment" -> "ssh-rsa AAAA…" (type and blob); "" when not a public key line.
std::string PublicKeyOf(const std::string& pub_file_text);
// The metadata `ssh-keys` line gcloud adds: "USER:ssh-rsa AAAA… USER".
std::string SshKeysLine(const std::string& user, const std::string& public_key);
// Whether `ssh_keys` (the metadata value, one key a line) holds `public_key` for `user`.
bool SshKeysHave(const std::string& ssh_keys, const std::string& user,
                 const std::string& public_key);

}  // namespace tpuemu::cli
