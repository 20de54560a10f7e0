#include "cli/tpuctl/ssh_args.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>

namespace tpuemu::cli {
namespace {

Status BadFlag(const std::string& flag, const std::string& why) {
  return Status::InvalidArgument("Invalid value for [" + flag + "]: " + why);
}

// A whole non-negative decimal number (at most 6 digits), or nullopt.
std::optional<int> Index(const std::string& text) {
  if (text.empty() || text.size() > 6) return std::nullopt;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
  }
  return std::stoi(text);
}

std::string Upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

void AddOptions(std::vector<std::string>& argv, const SshOptions& options,
                const SshTarget& target) {
  argv.insert(argv.end(),
              {"-i", options.key_file, "-o", "CheckHostIP=no", "-o", "HashKnownHosts=no"});
  if (!target.host_key_alias.empty()) {
    argv.insert(argv.end(), {"-o", "HostKeyAlias=" + target.host_key_alias});
  }
  argv.insert(argv.end(), {"-o", "IdentitiesOnly=yes", "-o", "StrictHostKeyChecking=no", "-o",
                           "UserKnownHostsFile=" + options.known_hosts_file});
}

void AddExtraFlags(std::vector<std::string>& argv, const SshOptions& options) {
  // gcloud splits each --ssh-flag on spaces ("-L 8080:localhost:8080" is two words).
  for (const std::string& flag : options.extra_flags) {
    std::istringstream words(flag);
    for (std::string word; words >> word;) argv.push_back(word);
  }
}

std::string UserAtHost(const SshTarget& target) {
  return target.user.empty() ? target.host : target.user + "@" + target.host;
}

}  // namespace

Result<std::vector<int>> ParseIndexList(const std::string& text, int count,
                                        const std::string& flag) {
  const std::string noun = flag == "--node" ? "node" : "worker";
  std::set<int> indexes;
  if (Upper(text) == "ALL") {
    for (int i = 0; i < count; ++i) indexes.insert(i);
  } else {
    std::stringstream items(text);
    for (std::string item; std::getline(items, item, ',');) {
      if (item.empty()) continue;
      size_t dash = item.find('-');
      if (dash == std::string::npos) {
        std::optional<int> i = Index(item);
        if (!i) {
          return BadFlag(flag,
                         "unable to parse " + noun + " ID " + item + ". Please only use numbers.");
        }
        indexes.insert(*i);
        continue;
      }
      std::optional<int> start = Index(item.substr(0, dash));
      std::optional<int> end = Index(item.substr(dash + 1));
      if (!start || !end || *start >= *end) {
        return BadFlag(flag, "found malformed range \"" + item +
                                 "\" (expected LOW-HIGH with LOW < HIGH, e.g. 1-3).");
      }
      for (int i = *start; i <= *end; ++i) indexes.insert(i);
    }
  }
  if (indexes.empty()) {
    return BadFlag(flag, "no " + noun + " specified, or none were parsed from the argument value.");
  }
  const int max = *indexes.rbegin();
  if (max >= count) {
    return BadFlag(flag, noun + " index " + std::to_string(max) + " is larger than the valid " +
                             noun + " indexes on this " +
                             (noun == "node" ? "queued resource" : "TPU VM") +
                             ". Please only use indexes in the range [0, " +
                             std::to_string(count - 1) + "], inclusive.");
  }
  return std::vector<int>(indexes.begin(), indexes.end());
}

std::pair<std::string, std::string> SplitUserAt(const std::string& arg) {
  size_t at = arg.find('@');
  if (at == std::string::npos) return {"", arg};
  return {arg.substr(0, at), arg.substr(at + 1)};
}

ScpPath ParseScpPath(const std::string& arg) {
  ScpPath p;
  size_t colon = arg.find(':');
  size_t slash = arg.find('/');
  if (colon == std::string::npos || colon == 0 || (slash != std::string::npos && slash < colon)) {
    p.path = arg;
    return p;
  }
  p.remote = true;
  auto [user, tpu] = SplitUserAt(arg.substr(0, colon));
  p.user = user;
  p.tpu = tpu;
  p.path = arg.substr(colon + 1);
  return p;
}

Result<ScpTarget> CheckScpPaths(const std::vector<ScpPath>& sources, const ScpPath& destination) {
  if (sources.empty()) return Status::InvalidArgument("scp needs at least one source");
  ScpTarget t;
  t.upload = destination.remote;
  if (t.upload) {
    for (const ScpPath& s : sources) {
      if (s.remote) {
        return Status::InvalidArgument(
            "All sources must be local files when destination is remote.");
      }
    }
    t.tpu = destination.tpu;
    t.user = destination.user;
    if (t.tpu.empty()) return Status::InvalidArgument("the destination names no TPU");
    return t;
  }
  for (const ScpPath& s : sources) {
    if (!s.remote) {
      return Status::InvalidArgument(
          "Source(s) must be remote when destination is local (write them TPU:PATH).");
    }
    if (s.tpu.empty()) return Status::InvalidArgument("a source names no TPU");
    if (t.tpu.empty()) {
      t.tpu = s.tpu;
      t.user = s.user;
    } else if (s.tpu != t.tpu || s.user != t.user) {
      return Status::InvalidArgument("All sources must refer to the same TPU and user.");
    }
  }
  return t;
}

int SshPortOf(const nlohmann::json& endpoint) {
  if (!endpoint.is_object() || !endpoint.contains("port")) return 0;
  const nlohmann::json& port = endpoint["port"];
  int value = 0;
  if (port.is_number_integer()) value = port.get<int>();
  if (port.is_string()) value = Index(port.get<std::string>()).value_or(0);
  if (value <= 0 || value > 65535 || value == 8470 || value == 22) return 0;
  return value;
}

std::vector<std::string> BuildSshArgv(const SshOptions& options, const SshTarget& target,
                                      const std::optional<std::string>& command) {
  std::vector<std::string> argv = {"ssh"};
  if (options.tty) argv.push_back("-t");
  AddOptions(argv, options, target);
  if (target.port != 0) argv.insert(argv.end(), {"-p", std::to_string(target.port)});
  AddExtraFlags(argv, options);
  argv.push_back(UserAtHost(target));
  if (command) argv.insert(argv.end(), {"--", *command});
  return argv;
}

std::vector<std::string> BuildScpArgv(const SshOptions& options, const SshTarget& target,
                                      const std::vector<ScpPath>& sources,
                                      const ScpPath& destination, bool recurse) {
  std::vector<std::string> argv = {"scp"};
  AddOptions(argv, options, target);
  if (target.port != 0) argv.insert(argv.end(), {"-P", std::to_string(target.port)});
  if (recurse) argv.push_back("-r");
  AddExtraFlags(argv, options);
  auto word = [&target](const ScpPath& p) {
    return p.remote ? UserAtHost(target) + ":" + p.path : p.path;
  };
  for (const ScpPath& s : sources) argv.push_back(word(s));
  argv.push_back(word(destination));
  return argv;
}

std::string ShellJoin(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& arg : argv) {
    if (!out.empty()) out += ' ';
    const bool plain = !arg.empty() && std::all_of(arg.begin(), arg.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) ||
             std::string_view("@%+=:,./_-~").find(c) != std::string_view::npos;
    });
    if (plain) {
      out += arg;
      continue;
    }
    out += '\'';
    for (char c : arg) out += c == '\'' ? std::string("'\"'\"'") : std::string(1, c);
    out += '\'';
  }
  return out;
}

std::string PublicKeyOf(const std::string& pub_file_text) {
  std::istringstream words(pub_file_text);
  std::string type, blob;
  if (!(words >> type >> blob)) return "";
  if (type.rfind("ssh-", 0) != 0 && type.rfind("ecdsa-", 0) != 0) return "";
  return type + " " + blob;
}

std::string SshKeysLine(const std::string& user, const std::string& public_key) {
  return user + ":" + public_key + " " + user;
}

bool SshKeysHave(const std::string& ssh_keys, const std::string& user,
                 const std::string& public_key) {
  std::istringstream lines(ssh_keys);
  const std::string prefix = user + ":" + public_key;
  for (std::string line; std::getline(lines, line);) {
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.front()))) {
      line.erase(0, 1);
    }
    if (line.rfind(prefix, 0) != 0) continue;
    // The key must end there (not be a prefix of a longer blob).
    if (line.size() == prefix.size() ||
        std::isspace(static_cast<unsigned char>(line[prefix.size()])))
      return true;
  }
  return false;
}

}  // namespace tpuemu::cli
