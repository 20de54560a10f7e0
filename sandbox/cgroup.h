// The worker cgroups (internal to sandbox/): where they live on this host and how to make, fill
// and remove them. cgroup v2 when /sys/fs/cgroup is the unified hierarchy (cgroup.controllers
// there), else v1's memory and pids hierarchies. Each worker gets tpuemu/<name> in each.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/status.h"

namespace tpuemu::sandbox::internal {

struct CgroupLayout {
  bool v2 = false;
  std::string memory_parent;  // ".../tpuemu" for the memory controller ("" when there is none)
  std::string pids_parent;    // ".../tpuemu" for the pids controller ("" when there is none)
};

// Reads /sys/fs/cgroup; touches nothing.
CgroupLayout DetectCgroups();

// Makes parent/<name> (and parent, enabling +memory +pids for children on v2) and writes the
// limit files named (0 = leave at "max"). Returns the folder.
Result<std::string> MakeCgroup(const CgroupLayout& layout, const std::string& parent,
                               const std::string& name, int64_t memory_limit_bytes,
                               int64_t pids_limit);

// rmdir, retried while the cgroup drains (EBUSY), up to `patience`. OK when it is gone.
Status RemoveCgroup(const std::string& dir, std::chrono::milliseconds patience);

// Removes the empty cgroups directly under `parent` whose name `stale` accepts (a worker's
// cgroup that a killed tpuemud left behind; one with processes in it is never removed: rmdir
// refuses). Returns how many it removed.
int RemoveStaleCgroups(const std::string& parent,
                       const std::function<bool(const std::string&)>& stale);

// The first number in `path` ("max" and unreadable files read as -1).
int64_t ReadCgroupNumber(const std::string& path);

}  // namespace tpuemu::sandbox::internal
