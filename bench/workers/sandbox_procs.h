// What bench_workers reads from /proc and the cgroup files about the worker sandboxes of its own
// tpuemud: which tpuemu-sandbox processes belong to the run, their VmRSS and Pss, and the cgroup
// limits a worker's processes live under. Header-only; reads only, never writes or signals.
#pragma once

#include <dirent.h>
#include <sys/types.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace tpuemu::bench {

inline std::string ReadProcFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// argv of `pid` joined with spaces ("" when it is gone or a kernel thread).
inline std::string CommandLine(pid_t pid) {
  std::string s = ReadProcFile("/proc/" + std::to_string(pid) + "/cmdline");
  for (char& c : s) {
    if (c == '\0') c = ' ';
  }
  return s;
}

// The number after "key:" in a /proc file of "Key:   123 kB" lines; -1 when absent.
inline int64_t ProcKb(const std::string& path, const std::string& key) {
  std::istringstream in(ReadProcFile(path));
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(key + ":", 0) == 0)
      return std::strtoll(line.c_str() + key.size() + 1, nullptr, 10);
  }
  return -1;
}

inline int64_t RssKb(pid_t pid) {
  return ProcKb("/proc/" + std::to_string(pid) + "/status", "VmRSS");
}

// The parent of `pid` (field 4 of /proc/PID/stat, after the command in parentheses); 0 if gone.
inline pid_t ParentPid(pid_t pid) {
  const std::string stat = ReadProcFile("/proc/" + std::to_string(pid) + "/stat");
  const size_t paren = stat.rfind(')');
  if (paren == std::string::npos) return 0;
  std::istringstream in(stat.substr(paren + 1));
  std::string state;
  pid_t parent = 0;
  in >> state >> parent;
  return parent;
}

inline std::vector<pid_t> AllPids() {
  std::vector<pid_t> out;
  DIR* dir = opendir("/proc");
  if (dir == nullptr) return out;
  while (dirent* e = readdir(dir)) {
    char* end = nullptr;
    const long pid = std::strtol(e->d_name, &end, 10);
    if (pid > 0 && *end == '\0') out.push_back(static_cast<pid_t>(pid));
  }
  closedir(dir);
  return out;
}

// The tpuemu-sandbox processes of this run: the boot helpers and the workers' inits (whose
// command line names their --dir under `root`, even once reparented) and any other
// tpuemu-sandbox process below `daemon` (the per-connection `enter` helpers). Other runs' sandboxes
// on the same machine are not counted.
inline std::vector<pid_t> SandboxPids(const std::string& root, pid_t daemon) {
  std::vector<pid_t> out;
  for (pid_t pid : AllPids()) {
    const std::string cmd = CommandLine(pid);
    if (cmd.find("tpuemu-sandbox") == std::string::npos) continue;
    bool ours = cmd.find(root) != std::string::npos;
    for (pid_t p = ParentPid(pid), hops = 0; !ours && p > 1 && hops < 64;
         p = ParentPid(p), ++hops) {
      ours = p == daemon;
    }
    if (ours) out.push_back(pid);
  }
  return out;
}

struct MemoryFigures {
  int processes = 0;
  int64_t rss_kb = 0;  // sum of VmRSS
  int64_t pss_kb = 0;  // sum of Pss (smaps_rollup): shared pages split among their users
};

inline MemoryFigures SumMemory(const std::vector<pid_t>& pids) {
  MemoryFigures f;
  for (pid_t pid : pids) {
    const int64_t rss = RssKb(pid);
    const int64_t pss = ProcKb("/proc/" + std::to_string(pid) + "/smaps_rollup", "Pss");
    if (rss < 0 || pss < 0) continue;  // exited meanwhile
    ++f.processes;
    f.rss_kb += rss;
    f.pss_kb += pss;
  }
  return f;
}

// The limit in `v1_file` (cgroup v1, under controller `v1_controller`) or `v2_file` (cgroup v2)
// of the cgroup `pid` lives in; "max" reads as INT64_MAX, no such file as -1. Where a v1
// hierarchy is mounted at a sub-cgroup the path of /proc/PID/cgroup is not under the mount;
// then tpuemu/<last component> below the mount is tried (sandbox/cgroup.h's layout).
inline int64_t CgroupLimit(pid_t pid, const std::string& v1_controller, const std::string& v1_file,
                           const std::string& v2_file) {
  const bool v2 = !ReadProcFile("/sys/fs/cgroup/cgroup.controllers").empty();
  std::istringstream in(ReadProcFile("/proc/" + std::to_string(pid) + "/cgroup"));
  std::vector<std::string> candidates;
  for (std::string line; std::getline(in, line);) {
    const size_t a = line.find(':');
    const size_t b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    const std::string controllers = "," + line.substr(a + 1, b - a - 1) + ",";
    const std::string path = line.substr(b + 1);
    const std::string name = path.substr(path.rfind('/') + 1);
    std::string mount, file;
    if (v2 && controllers == ",,") {
      mount = "/sys/fs/cgroup";
      file = v2_file;
    } else if (!v2 && controllers.find("," + v1_controller + ",") != std::string::npos) {
      mount = "/sys/fs/cgroup/" + v1_controller;
      file = v1_file;
    } else {
      continue;
    }
    candidates = {mount + path + "/" + file};
    if (!name.empty()) candidates.push_back(mount + "/tpuemu/" + name + "/" + file);
  }
  for (const std::string& file : candidates) {
    const std::string text = ReadProcFile(file);
    if (text.empty()) continue;
    if (text.rfind("max", 0) == 0) return std::numeric_limits<int64_t>::max();
    return std::strtoll(text.c_str(), nullptr, 10);
  }
  return -1;
}

}  // namespace tpuemu::bench
