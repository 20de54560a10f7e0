// BufferCache: recycles large host buffers so that tensors do not pay first-touch page faults on
// every execution.
//
// Why: a fresh 64 MiB allocation is mmap'ed by glibc and every page faults on first write; on
// virtualised hosts that costs ~0.2 s of CPU (measured in the dev sandbox: alloc + zero of 64 MiB
// = 0.22 s CPU, rewriting the same, already-faulted buffer = 0.003 s) — as much as the 4096³ bf16
// GEMM it holds the result of. Recycling the freed buffers of the previous step keeps the pages
// mapped, like a TPU runtime reuses its HBM allocations across steps.
// Policy: blocks >= kMinBytes are kept after release, matched by exact size (training steps repeat
// the same shapes), oldest evicted first once more than capacity_bytes are cached. Smaller blocks
// go straight to malloc/free.
// Thread-safe: all state is guarded by mu_. The process-wide instance is Global().
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <new>
#include <type_traits>
#include <utility>

namespace tpuemu::engine {

class BufferCache {
 public:
  static constexpr size_t kMinBytes = size_t{1} << 20;

  explicit BufferCache(size_t capacity_bytes) : capacity_bytes_(capacity_bytes) {}
  ~BufferCache();
  BufferCache(const BufferCache&) = delete;
  BufferCache& operator=(const BufferCache&) = delete;

  // 512 MiB; lives for the whole process.
  static BufferCache& Global();

  // Throws std::bad_alloc like operator new when memory is exhausted.
  void* Allocate(size_t bytes);
  void Release(void* p, size_t bytes);

  struct Stats {
    int64_t hits = 0;
    int64_t misses = 0;
    size_t cached_bytes = 0;
  };
  Stats GetStats() const;

 private:
  const size_t capacity_bytes_;
  mutable std::mutex mu_;
  std::deque<std::pair<size_t, void*>> free_;  // oldest first; guarded by mu_
  size_t cached_bytes_ = 0;                    // guarded by mu_
  Stats stats_;                                // guarded by mu_ (cached_bytes unused)
};

// std::allocator-compatible front end of BufferCache::Global(). Value-less construction
// default-initialises: a std::vector<float, RecyclingAllocator<float>>(n) holds indeterminate
// values (no zero-fill pass over a buffer its writer overwrites anyway); assign/insert a value
// when zeros are wanted.
template <typename T>
struct RecyclingAllocator {
  using value_type = T;
  RecyclingAllocator() = default;
  template <typename U>
  RecyclingAllocator(const RecyclingAllocator<U>&) {}  // NOLINT: allocator rebinding
  T* allocate(size_t n) { return static_cast<T*>(BufferCache::Global().Allocate(n * sizeof(T))); }
  void deallocate(T* p, size_t n) { BufferCache::Global().Release(p, n * sizeof(T)); }
  template <typename U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
  template <typename U>
  bool operator==(const RecyclingAllocator<U>&) const {
    return true;
  }
};

}  // namespace tpuemu::engine
