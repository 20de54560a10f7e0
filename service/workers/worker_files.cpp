#include "service/workers/worker_files.h"

#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace tpuemu::service {
namespace {

namespace fs = std::filesystem;

// Inside the worker, the config folder is here (bound read-only).
constexpr const char* kInside = "/etc/tpuemu";

// How long a connection may take to log in before its sshd ends it (sshd's LoginGraceTime; its
// default is 120 s). Short, because a connection that has not logged in holds one of its
// worker's few slots (WorkerOptions::ssh_max_startups).
constexpr int kSshLoginGraceSeconds = 20;

Status WriteFile(const std::string& path, const std::string& content, mode_t mode = 0644) {
  // In place (no rename): a file bound over a path inside keeps its inode.
  std::ofstream out(path, std::ios::trunc | std::ios::binary);
  out << content;
  out.close();
  if (!out) return Status::Internal("cannot write " + path);
  if (chmod(path.c_str(), mode) != 0) return Status::Internal("cannot chmod " + path);
  return Status::Ok();
}

// A value for sshd_config's SetEnv: quoted, with quotes and backslashes escaped.
std::string SshdQuoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// A value for a POSIX shell: single-quoted.
std::string ShellQuoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

}  // namespace

WorkerPaths PathsOf(const std::string& workers_dir, const Node& node, int worker) {
  WorkerPaths p;
  p.dir = workers_dir + "/" + node.uid + "/" + std::to_string(worker);
  p.config = p.dir + "/config";
  p.logs = p.dir + "/logs";
  p.startup_log = p.logs + "/startup-script.log";
  return p;
}

Result<std::vector<sandbox::Bind>> WriteWorkerFiles(const sandbox::Support& support,
                                                    const WorkerPaths& paths, const Node& node,
                                                    int worker, const GuestContext& context) {
  std::error_code ec;
  fs::create_directories(paths.config, ec);
  if (!ec) fs::create_directories(paths.logs, ec);
  if (ec) return Status::Internal("cannot make " + paths.dir + ": " + ec.message());

  Result<std::string> host_key =
      sandbox::EnsureHostKey(support, paths.config + "/ssh_host_ed25519_key");
  if (!host_key.ok()) return host_key.status();

  const auto env = WorkerEnvironment(node, worker, context);
  std::string sshd = "# tpuemu: sshd of worker " + std::to_string(worker) + " of " +
                     node.key.Name() +
                     "\n"
                     "HostKey " +
                     std::string(kInside) +
                     "/ssh_host_ed25519_key\n"
                     "PasswordAuthentication no\n"
                     "KbdInteractiveAuthentication no\n"
                     "PermitRootLogin prohibit-password\n"
                     "PubkeyAuthentication yes\n"
                     "AuthorizedKeysFile .ssh/authorized_keys\n"
                     "UsePAM no\n"
                     "StrictModes no\n"
                     "PrintMotd no\n"
                     "PrintLastLog no\n"
                     "LogLevel VERBOSE\n"
                     "LoginGraceTime " +
                     std::to_string(kSshLoginGraceSeconds) +
                     "\n"
                     "# sshd -i serves this one connection; tpuemud drops a worker's connections\n"
                     "# past the few that have not logged in yet, as MaxStartups would.\n"
                     "MaxStartups 1\n"
                     "# OpenSSH's default: the keys of a client's agent are tried in turn.\n"
                     "MaxAuthTries 6\n"
                     "AcceptEnv LANG LC_*\n"
                     "Subsystem sftp /usr/lib/openssh/sftp-server\n";
  std::string set_env = "SetEnv";
  for (const auto& [key, value] : env) set_env += " " + key + "=" + SshdQuoted(value);
  sshd += set_env + "\n";
  TPUEMU_RETURN_IF_ERROR(WriteFile(paths.config + "/sshd_config", sshd));

  std::string profile = "# tpuemu: the TPU environment of this worker\n";
  for (const auto& [key, value] : env) profile += "export " + key + "=" + ShellQuoted(value) + "\n";
  TPUEMU_RETURN_IF_ERROR(WriteFile(paths.config + "/profile.sh", profile));

  const std::string hostname = WorkerHostname(node, worker);
  std::string hosts = "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n";
  hosts += std::string(kMetadataServerIp) + "\tmetadata.google.internal metadata\n";
  for (int w = 0; w < node.type.workers; ++w) {
    hosts +=
        WorkerIpAddress(node, w) + "\t" + WorkerHostname(node, w) +
        (w == worker ? " " + hostname + "." + node.key.zone + ".c." + node.key.project + ".internal"
                     : "") +
        "\n";
  }
  TPUEMU_RETURN_IF_ERROR(WriteFile(paths.config + "/hosts", hosts));
  TPUEMU_RETURN_IF_ERROR(WriteFile(paths.config + "/hostname", hostname + "\n"));

  std::string script;
  if (const nlohmann::json md = node.fields.value("metadata", nlohmann::json::object());
      md.is_object() && md.contains("startup-script") && md["startup-script"].is_string()) {
    script = md["startup-script"].get<std::string>();
  }
  TPUEMU_RETURN_IF_ERROR(WriteFile(paths.config + "/startup-script", script, 0755));

  std::vector<sandbox::Bind> binds = {
      {paths.config, kInside, true},
      {paths.config + "/hosts", "/etc/hosts", true},
      {paths.config + "/hostname", "/etc/hostname", true},
      {paths.config + "/profile.sh", "/etc/profile.d/tpuemu-tpu.sh", true},
  };
  // tpuctl, and as tpu-info, where pip puts tools (found again at each boot: scripts/run builds
  // tpuctl after tpuemud starts).
  if (const std::string tpuctl = FindTpuctl(); !tpuctl.empty()) {
    binds.push_back({tpuctl, "/usr/local/bin/tpuctl", true});
    binds.push_back({tpuctl, "/usr/local/bin/tpu-info", true});
  }
  return binds;
}

std::string FindTpuctl() {
  std::vector<std::string> candidates;
  char exe[PATH_MAX];
  if (const ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1); n > 0) {
    const std::string self(exe, static_cast<size_t>(n));
    const std::string dir = self.substr(0, self.rfind('/') + 1);
    candidates.push_back(dir + "tpuctl");            // installed side by side
    candidates.push_back(dir + "../cli/tpuctl");     // build/daemon/tpuemud
    candidates.push_back(dir + "../../cli/tpuctl");  // build/tests/<folder>/<test>
  }
  candidates.push_back("/usr/local/bin/tpuctl");
  candidates.push_back("/usr/bin/tpuctl");
  for (const std::string& c : candidates) {
    if (access(c.c_str(), X_OK) == 0) {
      std::error_code ec;
      const std::filesystem::path canonical = std::filesystem::canonical(c, ec);
      if (!ec) return canonical.string();
    }
  }
  return "";
}

sandbox::TpuDevices TpuDevicesOf(const Node& node) {
  sandbox::TpuDevices devices;
  devices.chips = node.type.workers > 0 ? node.type.chips / node.type.workers : 0;
  switch (node.type.generation) {
    case engine::Generation::kV2:
    case engine::Generation::kV3:
      devices.device_id = "0x0027";
      break;
    case engine::Generation::kV4:
      devices.device_id = "0x005e";
      break;
    case engine::Generation::kV5p:
      devices.device_id = "0x0062";
      devices.vfio = true;
      break;
    case engine::Generation::kV5e:
      devices.device_id = "0x0063";
      devices.vfio = true;
      break;
    case engine::Generation::kV6e:
      devices.device_id = "0x006f";
      devices.vfio = true;
      break;
  }
  return devices;
}

Result<std::string> HostPublicKey(const WorkerPaths& paths) {
  std::ifstream in(paths.config + "/ssh_host_ed25519_key.pub");
  std::string type, blob;
  if (!(in >> type >> blob)) return Status::NotFound("no host key yet in " + paths.config);
  return type + " " + blob;
}

std::vector<std::string> SshdCommand(const sandbox::Support& support) {
  return {support.sshd, "-i", "-e", "-f", std::string(kInside) + "/sshd_config"};
}

std::vector<std::string> StartupScriptCommand(const std::string& script) {
  const std::string path = std::string(kInside) + "/startup-script";
  if (script.starts_with("#!")) return {path};
  return {"/bin/bash", path};
}

}  // namespace tpuemu::service
