#include "service/workers/host_capacity.h"

#include <sys/statvfs.h>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace tpuemu::service {
namespace {

int64_t ReadNumber(const char* path) {
  std::ifstream in(path);
  int64_t n = 0;
  return in >> n && n > 0 ? n : 0;
}

}  // namespace

int64_t HostMemoryTotalBytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string line;
  while (std::getline(meminfo, line)) {
    std::istringstream in(line);
    std::string key;
    int64_t kib = 0;
    if (in >> key >> kib && key == "MemTotal:" && kib > 0) return kib * 1024;
  }
  return 0;
}

int64_t HostPidsForWorkers() {
  const int64_t pid_max = ReadNumber("/proc/sys/kernel/pid_max");
  const int64_t threads_max = ReadNumber("/proc/sys/kernel/threads-max");
  int64_t least = std::min(pid_max, threads_max);
  if (least == 0) least = std::max(pid_max, threads_max);
  return least / 4 * 3;
}

int64_t FreeBytesAt(const std::string& dir) {
  struct statvfs fs {};
  if (statvfs(dir.c_str(), &fs) != 0) return 0;
  return static_cast<int64_t>(fs.f_bavail) * static_cast<int64_t>(fs.f_frsize);
}

std::string QueuedResourceHolder(const std::string& queued_resource) {
  return "queued resource " + queued_resource;
}

HostCapacity::HostCapacity(HostBudgets budgets, WorkerCost per_worker)
    : budgets_(budgets), per_worker_(per_worker) {}

Status HostCapacity::Reserve(const std::string& holder, int workers) {
  if (workers <= 0) return Status::Ok();
  std::lock_guard lock(mu_);
  struct Budget {
    const char* what;
    const char* flag;
    int64_t size;
    int64_t per_worker;
  };
  const Budget budgets[] = {
      {"workers", "--worker-max", budgets_.workers, 1},
      {"bytes of memory limits", "--worker-memory-budget-bytes", budgets_.memory_bytes,
       per_worker_.memory_bytes},
      {"pids", "--worker-pids-budget", budgets_.pids, per_worker_.pids},
      {"bytes of boot disks", "--worker-disk-budget-bytes", budgets_.disk_bytes,
       per_worker_.disk_bytes},
  };
  for (const Budget& b : budgets) {
    if (b.size <= 0 || b.per_worker <= 0) continue;
    const int64_t held = total_ * b.per_worker;
    const int64_t asked = workers * b.per_worker;
    if (held + asked <= b.size) continue;
    return Status::ResourceExhausted(
        "(tpuemud: this host cannot boot the node's " + std::to_string(workers) +
        (workers == 1 ? " worker" : " workers") + ": its " + b.flag + " " + std::to_string(b.size) +
        " is spent: " + std::to_string(total_) + " sandboxed workers hold " + std::to_string(held) +
        " " + b.what + ", " + std::to_string(asked) + " more asked)");
  }
  held_[holder] += workers;
  total_ += workers;
  return Status::Ok();
}

bool HostCapacity::Move(const std::string& from, const std::string& to, int workers) {
  std::lock_guard lock(mu_);
  auto it = held_.find(from);
  if (workers <= 0 || it == held_.end() || it->second < workers) return false;
  it->second -= workers;
  if (it->second == 0) held_.erase(it);
  held_[to] += workers;
  return true;
}

void HostCapacity::Restore(const std::string& holder, int workers) {
  if (workers <= 0) return;
  std::lock_guard lock(mu_);
  held_[holder] += workers;
  total_ += workers;
}

int HostCapacity::Release(const std::string& holder) {
  std::lock_guard lock(mu_);
  auto it = held_.find(holder);
  if (it == held_.end()) return 0;
  const int64_t freed = it->second;
  total_ -= freed;
  held_.erase(it);
  return static_cast<int>(freed);
}

void HostCapacity::Clear() {
  std::lock_guard lock(mu_);
  held_.clear();
  total_ = 0;
}

int64_t HostCapacity::held_workers() const {
  std::lock_guard lock(mu_);
  return total_;
}

}  // namespace tpuemu::service
