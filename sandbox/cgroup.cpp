#include "sandbox/cgroup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "sandbox/process.h"

namespace tpuemu::sandbox::internal {

namespace {

constexpr const char* kRoot = "/sys/fs/cgroup";

bool Exists(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0;
}

std::string ReadSmallFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Status WriteCgroupFile(const std::string& path, const std::string& value) {
  const int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return Status::Internal("cgroup " + path + ": " + ErrnoText(errno));
  const ssize_t n = write(fd, value.data(), value.size());
  const int err = errno;
  close(fd);
  if (n != static_cast<ssize_t>(value.size())) {
    return Status::Internal("cgroup " + path + " = " + value + ": " + ErrnoText(err));
  }
  return Status::Ok();
}

Status MakeDir(const std::string& dir) {
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    return Status::Internal("cgroup mkdir " + dir + ": " + ErrnoText(errno));
  }
  return Status::Ok();
}

bool HasWord(const std::string& text, const std::string& word) {
  std::istringstream in(text);
  std::string w;
  while (in >> w) {
    if (w == word) return true;
  }
  return false;
}

}  // namespace

CgroupLayout DetectCgroups() {
  CgroupLayout layout;
  const std::string root = kRoot;
  if (Exists(root + "/cgroup.controllers")) {
    layout.v2 = true;
    const std::string controllers = ReadSmallFile(root + "/cgroup.controllers");
    if (HasWord(controllers, "memory")) layout.memory_parent = root + "/tpuemu";
    if (HasWord(controllers, "pids")) layout.pids_parent = root + "/tpuemu";
    return layout;
  }
  if (Exists(root + "/memory/memory.limit_in_bytes"))
    layout.memory_parent = root + "/memory/tpuemu";
  if (Exists(root + "/pids/cgroup.procs")) layout.pids_parent = root + "/pids/tpuemu";
  return layout;
}

Result<std::string> MakeCgroup(const CgroupLayout& layout, const std::string& parent,
                               const std::string& name, int64_t memory_limit_bytes,
                               int64_t pids_limit) {
  TPUEMU_RETURN_IF_ERROR(MakeDir(parent));
  const bool memory = parent == layout.memory_parent;
  const bool pids = parent == layout.pids_parent;
  if (layout.v2) {
    // Controllers reach a cgroup only when every ancestor enables them for its children.
    for (const std::string& dir : {std::string(kRoot), parent}) {
      if (memory)
        TPUEMU_RETURN_IF_ERROR(WriteCgroupFile(dir + "/cgroup.subtree_control", "+memory"));
      if (pids) TPUEMU_RETURN_IF_ERROR(WriteCgroupFile(dir + "/cgroup.subtree_control", "+pids"));
    }
  }
  const std::string dir = parent + "/" + name;
  TPUEMU_RETURN_IF_ERROR(MakeDir(dir));
  // A reused folder keeps its old limits: every limit file is written, "no limit" included.
  if (memory && layout.v2) {
    const std::string v = memory_limit_bytes > 0 ? std::to_string(memory_limit_bytes) : "max";
    TPUEMU_RETURN_IF_ERROR(WriteCgroupFile(dir + "/memory.max", v));
    // Without swap a limit is a limit (the machines emulated have none).
    if (Exists(dir + "/memory.swap.max")) {
      (void)WriteCgroupFile(dir + "/memory.swap.max", memory_limit_bytes > 0 ? "0" : "max");
    }
  } else if (memory) {
    const bool memsw = Exists(dir + "/memory.memsw.limit_in_bytes");
    if (memsw) (void)WriteCgroupFile(dir + "/memory.memsw.limit_in_bytes", "-1");
    const std::string v = memory_limit_bytes > 0 ? std::to_string(memory_limit_bytes) : "-1";
    TPUEMU_RETURN_IF_ERROR(WriteCgroupFile(dir + "/memory.limit_in_bytes", v));
    if (memsw) (void)WriteCgroupFile(dir + "/memory.memsw.limit_in_bytes", v);
  }
  if (pids) {
    const std::string v = pids_limit > 0 ? std::to_string(pids_limit) : "max";
    TPUEMU_RETURN_IF_ERROR(WriteCgroupFile(dir + "/pids.max", v));
  }
  return dir;
}

Status RemoveCgroup(const std::string& dir, std::chrono::milliseconds patience) {
  if (dir.empty()) return Status::Ok();
  const auto deadline = std::chrono::steady_clock::now() + patience;
  for (;;) {
    if (rmdir(dir.c_str()) == 0 || errno == ENOENT) return Status::Ok();
    const int err = errno;
    if (err != EBUSY || std::chrono::steady_clock::now() >= deadline) {
      return Status::Internal("cgroup rmdir " + dir + ": " + ErrnoText(err));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

int RemoveStaleCgroups(const std::string& parent,
                       const std::function<bool(const std::string&)>& stale) {
  DIR* dir = opendir(parent.c_str());
  if (dir == nullptr) return 0;
  std::vector<std::string> names;
  while (dirent* e = readdir(dir)) {
    const std::string name = e->d_name;
    if (e->d_type == DT_DIR && name != "." && name != ".." && stale(name)) names.push_back(name);
  }
  closedir(dir);
  int removed = 0;
  for (const std::string& name : names) {
    if (rmdir((parent + "/" + name).c_str()) == 0) ++removed;
  }
  return removed;
}

int64_t ReadCgroupNumber(const std::string& path) {
  const std::string text = ReadSmallFile(path);
  if (text.empty() || text[0] < '0' || text[0] > '9') return -1;
  return std::strtoll(text.c_str(), nullptr, 10);
}

}  // namespace tpuemu::sandbox::internal
