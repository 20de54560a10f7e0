// InitCache: the values of randomly initialised parameters and constants, kept across executions.
//
// Why: an Init is deterministic (same dtype, shape, seed, distribution and scale give the same
// values), yet materialising it costs a Box-Muller draw per pair of elements — for a 2048³ matmul
// job whose operands are random-init parameters, about as long as the GEMM itself, every step.
// The executor takes such tensors from here instead; a program's later steps then reuse them.
// Only Init::Kind::kRandom is cached (fills and explicit values cost a copy at most).
// Policy: least recently used entries are dropped once the cached bytes pass the capacity; a
// tensor above the capacity is materialised but not kept. Handed-out tensors are shared and
// immutable (callers copy before writing), so eviction never invalidates a running execution.
// Thread-safe: state is guarded by mu_; materialisation runs outside the lock (two threads
// missing the same key at once both compute it, and one result is kept).
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "base/status.h"
#include "engine/frontend/ir.h"
#include "engine/runtime/cancel.h"
#include "engine/runtime/tensor.h"

namespace tpuemu::engine {

class InitCache {
 public:
  explicit InitCache(size_t capacity_bytes) : capacity_bytes_(capacity_bytes) {}
  InitCache(const InitCache&) = delete;
  InitCache& operator=(const InitCache&) = delete;

  // 256 MiB; lives for the whole process.
  static InitCache& Global();

  // The values of `init` as a dtype[shape] tensor (INVALID_ARGUMENT as MaterializeInit). A miss
  // stops at `cancel` with its status (MaterializeInit), keeping nothing.
  Result<std::shared_ptr<const Tensor>> Get(DType dtype, const Shape& shape, const Init& init,
                                            const CancelToken& cancel = {});

  using Stats = BufferCache::Stats;  // hits, misses, cached_bytes
  Stats GetStats() const;

 private:
  struct Entry {
    std::string key;
    std::shared_ptr<const Tensor> tensor;
    size_t bytes = 0;
  };

  const size_t capacity_bytes_;
  mutable std::mutex mu_;
  std::list<Entry> lru_;  // most recent first; guarded by mu_
  std::unordered_map<std::string, std::list<Entry>::iterator> index_;  // guarded by mu_
  size_t cached_bytes_ = 0;                                            // guarded by mu_
  Stats stats_;                                                        // guarded by mu_
};

}  // namespace tpuemu::engine
