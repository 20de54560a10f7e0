#include "sandbox/id_range.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace tpuemu::sandbox::internal {
namespace {

constexpr uint64_t kFirstId = uint64_t{1} << 30;
constexpr int kRanges = 4096;

using Span = std::pair<uint64_t, uint64_t>;  // [first, end)

std::mutex claim_mu;
uid_t claimed = 0;  // this process's range (0: none yet); guarded by claim_mu

// Ids the host already uses: accounts, and ranges delegated to its users.
std::vector<Span> HostIds() {
  std::vector<Span> used;
  for (const char* file : {"/etc/passwd", "/etc/group"}) {
    std::ifstream in(file);
    std::string line;
    while (std::getline(in, line)) {
      std::stringstream ss(line);
      std::string name, password, id;
      if (std::getline(ss, name, ':') && std::getline(ss, password, ':') &&
          std::getline(ss, id, ':')) {
        const uint64_t v = strtoull(id.c_str(), nullptr, 10);
        used.emplace_back(v, v + 1);
      }
    }
  }
  for (const char* file : {"/etc/subuid", "/etc/subgid"}) {
    std::ifstream in(file);
    std::string line;
    while (std::getline(in, line)) {
      std::stringstream ss(line);
      std::string name, first, count;
      if (std::getline(ss, name, ':') && std::getline(ss, first, ':') &&
          std::getline(ss, count, ':')) {
        const uint64_t f = strtoull(first.c_str(), nullptr, 10);
        used.emplace_back(f, f + strtoull(count.c_str(), nullptr, 10));
      }
    }
  }
  return used;
}

bool Overlaps(const std::vector<Span>& used, uint64_t first, uint64_t end) {
  for (const Span& s : used) {
    if (s.first < end && first < s.second) return true;
  }
  return false;
}

}  // namespace

Result<uid_t> ClaimIdRange(unsigned preferred) {
  std::lock_guard lock(claim_mu);
  if (claimed != 0) return claimed;
  mkdir("/run/tpuemu", 0755);
  const std::vector<Span> used = HostIds();
  for (int i = 0; i < kRanges; ++i) {
    const int n = static_cast<int>((preferred + static_cast<unsigned>(i)) % kRanges);
    const uint64_t first = kFirstId + static_cast<uint64_t>(n) * kWorkerIdCount;
    if (Overlaps(used, first, first + kWorkerIdCount)) continue;
    const std::string path = "/run/tpuemu/worker-ids-" + std::to_string(n) + ".lock";
    const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) continue;
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) {  // fd stays open: the claim lasts
      claimed = static_cast<uid_t>(first);
      return claimed;
    }
    close(fd);
  }
  return Status::Unavailable("no free range of " + std::to_string(kWorkerIdCount) +
                             " host ids for worker user namespaces (every /run/tpuemu/"
                             "worker-ids lock is held)");
}

bool IdRangeUnowned(uid_t first) {
  {
    std::lock_guard lock(claim_mu);
    if (first == claimed) return true;
  }
  if (first < kFirstId || (first - kFirstId) % kWorkerIdCount != 0) return false;
  const uint64_t n = (first - kFirstId) / kWorkerIdCount;
  const std::string path = "/run/tpuemu/worker-ids-" + std::to_string(n) + ".lock";
  const int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return true;  // never claimed since the host booted
  const bool free = flock(fd, LOCK_EX | LOCK_NB) == 0;
  close(fd);  // and with it the lock just taken
  return free;
}

}  // namespace tpuemu::sandbox::internal
