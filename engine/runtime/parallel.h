// ParallelContext: how much of the machine one op may use, and when it must stop.
//
// An op's work is cut into chunks; ParallelChunks hands them to up to Threads() threads (the
// calling thread included) on the pool, under the job's fairness group, and stops handing them
// out once the cancel token stops. Chunks are the cancellation points: each should take well under
// 100 ms (kernels size them by work, e.g. engine/kernels/gemm.cpp's tiles, kElementwiseGrain
// elements). Threading: a ParallelContext is a value borrowed for one Execute; the pool and the
// cancel flag must outlive it. fn runs concurrently on several threads and must not throw.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "base/ceil_div.h"
#include "engine/runtime/cancel.h"
#include "engine/runtime/pool.h"

namespace tpuemu::engine {

struct ParallelContext {
  Pool* pool = nullptr;  // optional; not owned. Without it everything runs on the caller.
  std::string group = "engine";
  int max_threads = 0;  // threads one op may use, caller included; 0 = pool threads + 1
  CancelToken cancel;

  // The threads an op may use here: 1 without a pool, else min(max_threads, pool threads + 1).
  int Threads() const;
};

// Elementwise loops: chunks of this many elements (~0.1-1 ms each) keep a cancel within reach
// and are big enough that hand-out costs nothing.
inline constexpr int64_t kElementwiseGrain = int64_t{1} << 16;

// Runs fn(begin, end) over [0, n) in consecutive chunks of `grain` elements (the last may be
// shorter), in parallel when the context allows and n > grain. Returns true when every chunk ran,
// false when the cancel token stopped the loop (some chunks then did not run).
bool ParallelChunks(const ParallelContext& ctx, int64_t n, int64_t grain,
                    const std::function<void(int64_t, int64_t)>& fn);

}  // namespace tpuemu::engine
