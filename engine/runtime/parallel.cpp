#include "engine/runtime/parallel.h"

#include <algorithm>
#include <atomic>

namespace tpuemu::engine {

int ParallelContext::Threads() const {
  if (pool == nullptr) return 1;
  const int all = pool->threads() + 1;
  return max_threads > 0 ? std::min(max_threads, all) : all;
}

bool ParallelChunks(const ParallelContext& ctx, int64_t n, int64_t grain,
                    const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return !ctx.cancel.Stopped();
  grain = std::max<int64_t>(grain, 1);
  const int64_t chunks = (n + grain - 1) / grain;
  const int threads = ctx.Threads();
  if (threads <= 1 || chunks == 1) {
    for (int64_t c = 0; c < chunks; ++c) {
      if (ctx.cancel.Stopped()) return false;
      fn(c * grain, std::min(n, (c + 1) * grain));
    }
    return true;
  }
  std::atomic<bool> stopped{false};
  ctx.pool->ParallelFor(
      ctx.group, chunks,
      [&](int64_t c) {
        if (stopped.load(std::memory_order_relaxed)) return;
        if (ctx.cancel.Stopped()) {
          stopped.store(true, std::memory_order_relaxed);
          return;
        }
        fn(c * grain, std::min(n, (c + 1) * grain));
      },
      threads);
  return !stopped.load();
}

}  // namespace tpuemu::engine
