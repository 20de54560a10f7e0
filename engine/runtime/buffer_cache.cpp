#include "engine/runtime/buffer_cache.h"

#include <cstdlib>

namespace tpuemu::engine {

BufferCache::~BufferCache() {
  for (auto& [bytes, p] : free_) std::free(p);
}

BufferCache& BufferCache::Global() {
  static BufferCache* cache = new BufferCache(size_t{512} << 20);  // never destroyed: tensors
  return *cache;                                                   // may outlive static dtors
}

void* BufferCache::Allocate(size_t bytes) {
  if (bytes >= kMinBytes) {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = free_.rbegin(); it != free_.rend(); ++it) {  // most recent first: warmest
      if (it->first == bytes) {
        void* p = it->second;
        cached_bytes_ -= bytes;
        free_.erase(std::next(it).base());
        ++stats_.hits;
        return p;
      }
    }
    ++stats_.misses;
  }
  void* p = std::malloc(bytes == 0 ? 1 : bytes);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

void BufferCache::Release(void* p, size_t bytes) {
  if (p == nullptr) return;
  if (bytes < kMinBytes || bytes > capacity_bytes_) {
    std::free(p);
    return;
  }
  std::deque<std::pair<size_t, void*>> evicted;
  {
    std::lock_guard<std::mutex> lock(mu_);
    free_.emplace_back(bytes, p);
    cached_bytes_ += bytes;
    while (cached_bytes_ > capacity_bytes_) {
      cached_bytes_ -= free_.front().first;
      evicted.push_back(free_.front());
      free_.pop_front();
    }
  }
  for (auto& [size, q] : evicted) std::free(q);  // munmap outside the lock
}

BufferCache::Stats BufferCache::GetStats() const {
  std::lock_guard<std::mutex> lock(mu_);
  Stats s = stats_;
  s.cached_bytes = cached_bytes_;
  return s;
}

}  // namespace tpuemu::engine
